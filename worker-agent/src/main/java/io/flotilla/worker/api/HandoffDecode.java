package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.worker.agent.WorkerInstance;
import io.flotilla.worker.engine.KvImport;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.kv.HandoffCheck;
import io.flotilla.worker.kv.HandoffFailure;
import io.flotilla.worker.kv.KvTransferNode;
import io.grpc.stub.ServerCallStreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;

/**
 * A Generate that carries a KV handoff (ARCHITECTURE "Disaggregated (prefill first)"): check it,
 * pull its blocks on a pull thread, tell the source to release its lease, then continue decoding
 * from the handoff's first token. Anything that goes wrong before the continuation is queued ends
 * in a local prefill of the whole prompt, with the reason in the last chunk's
 * {@code handoff_refused_reason}: refusals before any transfer count as
 * {@code handoffs_refused{reason}}, failures after as {@code handoff_fallbacks{reason}}. The source
 * hears a release in every case where this worker has a transfer side (transferred = whether the
 * blocks arrived), so its lease rarely has to expire.
 */
final class HandoffDecode {

    private static final Logger log = LoggerFactory.getLogger(HandoffDecode.class);

    private final WorkerInstance worker;
    private final GenerateRequest request;
    private final ServerCallStreamObserver<GenerateChunk> stream;
    private final CancelRelay relay;

    private HandoffDecode(WorkerInstance worker, GenerateRequest request, ServerCallStreamObserver<GenerateChunk> stream,
                          CancelRelay relay) {
        this.worker = worker;
        this.request = request;
        this.stream = stream;
        this.relay = relay;
    }

    /** Starts serving {@code request} (which has a handoff); returns without waiting for the transfer. */
    static void start(WorkerInstance worker, GenerateRequest request, ServerCallStreamObserver<GenerateChunk> stream,
                      CancelRelay relay) {
        HandoffDecode d = new HandoffDecode(worker, request, stream, relay);
        KvHandoff h = request.getHandoff();
        KvTransferNode node = worker.transfer().orElse(null);
        try {
            if (node == null) {
                throw new HandoffFailure("unsupported", worker.identity().id() + " has no KV transfer agent (role "
                        + worker.identity().role() + ")");
            }
            HandoffCheck.check(h, request, worker.identity(), node.clock().millis());
        } catch (HandoffFailure f) {
            worker.metrics().handoffRefused(f.reason());
            d.releaseSource(node, false);
            d.prefillLocally(f);
            return;
        }
        try {
            node.pulls().execute(() -> d.pullAndContinue(node));
        } catch (RejectedExecutionException e) {
            d.fallBack(node, new HandoffFailure("transfer", "the worker is shutting down its transfer side"));
        }
    }

    private void pullAndContinue(KvTransferNode node) {
        KvHandoff h = request.getHandoff();
        Duration timeout = node.pullTimeout();
        if (request.getDeadlineMs() > 0) {
            long left = request.getDeadlineMs() - node.clock().millis();
            timeout = Duration.ofMillis(Math.max(1, Math.min(timeout.toMillis(), left)));
        }
        KvImport imported;
        try {
            if (relay.cancelled()) {
                throw new HandoffFailure("cancelled", "the client cancelled before the transfer");
            }
            imported = node.puller().pull(h, EngineRequests.prompt(request), EngineRequests.scope(request.getCacheScope()),
                    timeout);
        } catch (HandoffFailure f) {
            fallBack(node, f);
            return;
        } catch (RuntimeException e) {
            fallBack(node, new HandoffFailure("transfer", "pulling the handoff failed: " + e, e));
            return;
        }
        releaseSource(node, true);
        if (relay.cancelled()) {
            imported.abort();
            return;
        }
        RequestHandle handle;
        try {
            int importedTokens = imported.toFetch().size() * worker.identity().blockSize();
            GenerateCall call = new GenerateCall(stream, worker.identity().id(), worker.metrics(), importedTokens);
            handle = node.engine().submitContinuation(EngineRequests.of(request), h.getFirstToken(), h.getRngState(),
                    imported, call);
        } catch (RuntimeException e) {
            imported.abort();
            stream.onError(GrpcErrors.toStatus(e).asRuntimeException());
            return;
        }
        worker.metrics().handoffUsed();
        relay.attach(handle);
    }

    private void fallBack(KvTransferNode node, HandoffFailure f) {
        log.info("{}: handoff of request {} from {} failed ({}: {}); prefilling locally", worker.identity().id(),
                request.getRequestId(), request.getHandoff().getSourceWorkerId(), f.reason(), f.getMessage());
        worker.metrics().handoffFallback(f.reason());
        releaseSource(node, false);
        if (!relay.cancelled()) {
            prefillLocally(f);
        }
    }

    private void releaseSource(KvTransferNode node, boolean transferred) {
        if (node != null) {
            KvHandoff h = request.getHandoff();
            node.releaser().release(h.getSourceEndpoint(), h.getLeaseId(), transferred);
        }
    }

    private void prefillLocally(HandoffFailure why) {
        WorkerGrpcService.submitLocal(worker, request, stream, relay, "handoff refused (" + why.reason() + "): "
                + why.getMessage());
    }
}
