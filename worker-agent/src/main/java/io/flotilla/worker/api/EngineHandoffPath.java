package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.kv.EngineHandoffs;
import io.flotilla.worker.kv.HandoffCheck;
import io.flotilla.worker.kv.HandoffFailure;
import io.micrometer.observation.Observation;

/**
 * Handoffs where the engines move the KV themselves (vLLM {@code kv_transfer_params} with NixlConnector
 * or a compatible connector): the agent never touches KV bytes.
 *
 * <p>Decode: check the handoff, then give its engine transfer parameters to the engine with the request
 * ({@code do_remote_prefill}); the engine samples the first token. A handoff this worker cannot use
 * (another model, KV layout or block size, expired, no or malformed engine params) is refused before
 * the engine sees it, counted as {@code handoffs_refused{reason}}, and the prompt is prefilled here.
 *
 * <p>Prefill: the engine prefills for a remote decode ({@code do_remote_decode}) via
 * {@link EnginePrefillCall}; the answer is a handoff carrying the engine's transfer parameters.
 */
public final class EngineHandoffPath implements HandoffPath {

    private final LocalGenerate local;
    private final EngineHandoffs side;

    public EngineHandoffPath(LocalGenerate local, EngineHandoffs side) {
        this.local = local;
        this.side = side;
    }

    @Override
    public void decode(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay) {
        KvHandoff h = request.getHandoff();
        try {
            HandoffCheck.checkEngineTransfer(h, request, local.identity(), side.clock().millis());
        } catch (HandoffFailure f) {
            local.refuse(request, stream, relay, f);
            return;
        }
        // the engine's connector moves full blocks only; the partial last block is computed here
        int blockSize = local.identity().blockSize();
        int importedTokens = h.getComputedTokens() / blockSize * blockSize;
        GenerateCall call = new GenerateCall(stream, local.identity().id(), local.metrics(), importedTokens);
        RequestHandle handle;
        // observed as a local generation is: the engine's HTTP request, and so its own transfer, joins the trace
        TokenSink observed = ObservedTokenSink.start(call, local.observations(), local.identity().id(), local.engineKind());
        try (Observation.Scope inEngine = ObservedTokenSink.openScope(observed)) {
            handle = side.engine().submitWithKvTransfer(EngineRequests.of(request), h.getEngineTransferParams(), observed);
        } catch (RuntimeException e) {
            ObservedTokenSink.abandon(observed, e);
            stream.fail(CallFailure.of(e));
            return;
        }
        local.metrics().handoffUsed();
        relay.attach(handle);
    }

    @Override
    public boolean servesPrefill() {
        return true;
    }

    @Override
    public void prefill(PrefillRequest request, Replies<PrefillResult> stream, CancelRelay relay) {
        EnginePrefillCall.start(local.identity(), local.metrics(), side, request, stream, relay);
    }

    @Override
    public boolean releaseLease(String leaseId) {
        return false; // the engines hold and free the blocks; there are no agent leases
    }

    @Override
    public void close() {
    }
}
