package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.worker.agent.WorkerInstance;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.kv.EngineHandoffs;
import io.flotilla.worker.kv.HandoffCheck;
import io.flotilla.worker.kv.HandoffFailure;
import io.grpc.stub.ServerCallStreamObserver;

/**
 * A Generate with a KV handoff on a worker whose engine pulls the KV itself: check the handoff, then
 * give its engine transfer parameters to the engine with the request (vLLM {@code kv_transfer_params}
 * with {@code do_remote_prefill}); the engine samples the first token. A handoff this worker cannot
 * use (another model, KV layout or block size, expired, no or malformed engine params) is refused
 * before the engine sees it, counted as {@code handoffs_refused{reason}}, and the prompt is prefilled
 * here, with the reason in the last chunk's {@code handoff_refused_reason}.
 */
final class EngineHandoffDecode {

    private EngineHandoffDecode() {
    }

    static void start(WorkerInstance worker, EngineHandoffs side, GenerateRequest request,
                      ServerCallStreamObserver<GenerateChunk> stream, CancelRelay relay) {
        KvHandoff h = request.getHandoff();
        try {
            HandoffCheck.checkEngineTransfer(h, request, worker.identity(), side.clock().millis());
        } catch (HandoffFailure f) {
            worker.metrics().handoffRefused(f.reason());
            WorkerGrpcService.submitLocal(worker, request, stream, relay, "handoff refused (" + f.reason() + "): "
                    + f.getMessage());
            return;
        }
        // the engine's connector moves full blocks only; the partial last block is computed here
        int importedTokens = h.getComputedTokens() / worker.identity().blockSize() * worker.identity().blockSize();
        GenerateCall call = new GenerateCall(stream, worker.identity().id(), worker.metrics(), importedTokens);
        RequestHandle handle;
        try {
            handle = side.engine().submitWithKvTransfer(EngineRequests.of(request), h.getEngineTransferParams(), call);
        } catch (RuntimeException e) {
            stream.onError(GrpcErrors.toStatus(e).asRuntimeException());
            return;
        }
        worker.metrics().handoffUsed();
        relay.attach(handle);
    }
}
