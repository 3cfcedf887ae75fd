package io.flotilla.worker.api;

import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.Usage;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.engine.PrefillSink;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.kv.HandoffBuilder;
import io.flotilla.worker.kv.KvLease;
import io.flotilla.worker.kv.KvTransferNode;

/**
 * Answers one Prefill: puts the engine's pinned prompt under a transfer lease and replies with the
 * handoff. Invariant: the pin ends up either in the lease table or released, never neither; a
 * client that cancelled before the answer gets nothing and the pin is released at once.
 */
final class PrefillCall implements PrefillSink {

    private final WorkerIdentity identity;
    private final KvTransferNode transfer;
    private final GenerationMeters metrics;
    private final PrefillRequest request;
    private final Replies<PrefillResult> stream;

    PrefillCall(WorkerIdentity identity, KvTransferNode transfer, GenerationMeters metrics, PrefillRequest request,
                Replies<PrefillResult> stream) {
        this.identity = identity;
        this.transfer = transfer;
        this.metrics = metrics;
        this.request = request;
        this.stream = stream;
    }

    @Override
    public void onPrefilled(PrefilledKv kv) {
        // The prompt was computed (or found cached) here whatever happens to the answer, as in Generate.
        metrics.requestFinished(kv.promptTokens(), kv.cachedTokens(), 0);
        if (stream.cancelled()) {
            kv.pin().release();
            return;
        }
        KvLease lease;
        try {
            lease = transfer.leases().grant(request.getRequestId(), kv.blocks().size(), kv.pin());
        } catch (IllegalStateException e) {
            stream.fail(CallFailure.of(CallFailure.Kind.UNAVAILABLE, "worker is shutting down"));
            return;
        }
        KvHandoff handoff;
        try {
            handoff = HandoffBuilder.build(identity, request, kv, lease, transfer.regions(), transfer.agentMetadata());
        } catch (RuntimeException e) {
            transfer.leases().release(lease.id());
            stream.fail(CallFailure.of(CallFailure.Kind.INTERNAL, "cannot describe the handoff: " + e));
            return;
        }
        stream.next(PrefillResult.newBuilder()
                .setHandoff(handoff)
                .setUsage(Usage.newBuilder()
                        .setPromptTokens(kv.promptTokens())
                        .setCachedTokens(kv.cachedTokens())
                        .setCompletionTokens(1))
                .build());
        stream.complete();
    }

    @Override
    public void onError(Throwable error) {
        if (!stream.cancelled()) {
            stream.fail(CallFailure.of(error));
        }
    }
}
