package io.flotilla.worker.api;

import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.Usage;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.engine.RemotePrefill;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.kv.EngineHandoffs;
import io.flotilla.worker.kv.HandoffBuilder;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * Answers one Prefill on a worker whose engine moves the KV itself: the engine prefills for a remote
 * decode (vLLM {@code do_remote_decode}) and the answer is a handoff carrying the engine's transfer
 * parameters. A client that cancels abandons the engine request; it gets nothing.
 */
final class EnginePrefillCall {

    private EnginePrefillCall() {
    }

    static void start(WorkerIdentity identity, GenerationMeters metrics, EngineHandoffs side, PrefillRequest request,
                      Replies<PrefillResult> stream, CancelRelay relay) {
        CompletableFuture<RemotePrefill> prefill;
        try {
            prefill = side.engine().prefillRemote(EngineRequests.of(request));
        } catch (RuntimeException e) {
            stream.fail(CallFailure.of(e));
            return;
        }
        relay.attach(new RequestHandle() {
            @Override
            public String requestId() {
                return request.getRequestId();
            }

            @Override
            public void cancel() {
                prefill.cancel(true);
            }
        });
        prefill.whenComplete((p, error) -> {
            if (error == null) {
                metrics.requestFinished(promptTokens(p, request), p.cachedTokens(), 0);
            }
            if (stream.cancelled()) {
                return;
            }
            if (error != null) {
                Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
                stream.fail(CallFailure.of(cause));
                return;
            }
            int promptTokens = promptTokens(p, request);
            stream.next(PrefillResult.newBuilder()
                    .setHandoff(HandoffBuilder.buildEngineTransfer(identity, request, p, side.expiryFromNow()))
                    .setUsage(Usage.newBuilder()
                            .setPromptTokens(promptTokens)
                            .setCachedTokens(p.cachedTokens())
                            .setCompletionTokens(1))
                    .build());
            stream.complete();
        });
    }

    private static int promptTokens(RemotePrefill p, PrefillRequest request) {
        return p.promptTokens() > 0 ? p.promptTokens() : request.getTokenIdsCount();
    }
}
