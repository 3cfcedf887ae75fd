package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.identity.WorkerIdentity;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;

/**
 * Runs a Generate on this worker's engine from its prompt: no handoff, or a refused or failed one.
 * The engine reuses what its tiers hold (device prefix cache, onboarding from host memory and disk).
 *
 * @param identity the worker
 * @param engine   its engine
 * @param metrics  its metrics
 * @param observations where the engine's part of a request is observed ({@link ObservedTokenSink})
 * @param engineKind   the engine's name in that observation ({@code flotilla.worker.engine})
 */
public record LocalGenerate(WorkerIdentity identity, Engine engine, GenerationMeters metrics, ObservationRegistry observations,
                            String engineKind) {

    /** Unobserved. */
    public LocalGenerate(WorkerIdentity identity, Engine engine, GenerationMeters metrics) {
        this(identity, engine, metrics, ObservationRegistry.NOOP, "");
    }

    /** @param handoffRefusedReason empty unless a handoff was refused; sent in the last chunk */
    void submit(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay,
                String handoffRefusedReason) {
        GenerateCall call = new GenerateCall(stream, identity.id(), metrics, handoffRefusedReason);
        RequestHandle handle;
        TokenSink observed = ObservedTokenSink.start(call, observations, identity.id(), engineKind);
        try (Observation.Scope inEngine = ObservedTokenSink.openScope(observed)) {
            handle = engine.submit(EngineRequests.of(request), observed);
        } catch (RuntimeException e) {
            ObservedTokenSink.abandon(observed, e);
            stream.fail(CallFailure.of(e));
            return;
        }
        relay.attach(handle);
    }

    /** A handoff this worker does not use: counted, then the prompt is prefilled here. */
    void refuse(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay,
                io.flotilla.worker.kv.HandoffFailure why) {
        metrics.handoffRefused(why.reason());
        submit(request, stream, relay, "handoff refused (" + why.reason() + "): " + why.getMessage());
    }
}
