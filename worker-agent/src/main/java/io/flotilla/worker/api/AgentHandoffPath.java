package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvHandoff;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.worker.engine.KvImport;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.kv.HandoffCheck;
import io.flotilla.worker.kv.HandoffFailure;
import io.flotilla.worker.kv.KvTransferNode;
import io.micrometer.common.KeyValue;
import io.micrometer.observation.Observation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;

/**
 * Handoffs through Flotilla's transfer agent (ARCHITECTURE "Disaggregated prefill/decode").
 *
 * <p>Decode: check the handoff, pull its blocks on a pull thread, tell the source to release its
 * lease, then continue decoding from the handoff's first token. Anything that goes wrong before the
 * continuation is queued ends in a local prefill of the whole prompt, with the reason in the last
 * chunk's {@code handoff_refused_reason}: refusals before any transfer count as
 * {@code handoffs_refused{reason}}, failures after as {@code handoff_fallbacks{reason}}. The source
 * hears a release in every case (transferred = whether the blocks arrived), so its lease rarely has
 * to expire.
 *
 * <p>Observed (when the worker's observations are): the pull is {@value #PULL_OBSERVATION} ("kv transfer", tagged
 * {@code outcome}: {@code transferred} or the failure's reason) and the continuation is the engine's observation
 * ({@link ObservedTokenSink}), both children of the Generate call's, though they run on the pull thread.
 *
 * <p>Prefill: the engine pins the prompt's blocks; {@link PrefillCall} puts them under a lease and
 * answers with the handoff.
 */
public final class AgentHandoffPath implements HandoffPath {

    private static final Logger log = LoggerFactory.getLogger(AgentHandoffPath.class);

    /** The observation of one handoff's pull (its timer is {@code flotilla_worker_kv_pull_seconds{outcome}}). */
    static final String PULL_OBSERVATION = "flotilla.worker.kv.pull";

    private final LocalGenerate local;
    private final KvTransferNode node;

    public AgentHandoffPath(LocalGenerate local, KvTransferNode node) {
        this.local = local;
        this.node = node;
    }

    /** The transfer side (leases, puller), for tests and status. */
    public KvTransferNode node() {
        return node;
    }

    @Override
    public void decode(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay) {
        try {
            HandoffCheck.check(request.getHandoff(), request, local.identity(), node.clock().millis());
        } catch (HandoffFailure f) {
            releaseSource(request, false);
            local.refuse(request, stream, relay, f);
            return;
        }
        Observation caller = local.observations().getCurrentObservation();
        try {
            node.pulls().execute(() -> {
                try (Observation.Scope inCall = caller == null ? Observation.Scope.NOOP : caller.openScope()) {
                    pullAndContinue(request, stream, relay);
                }
            });
        } catch (RejectedExecutionException e) {
            fallBack(request, stream, relay, new HandoffFailure("transfer", "the worker is shutting down its transfer side"));
        }
    }

    private void pullAndContinue(GenerateRequest request, Replies<GenerateChunk> stream,
                                 CancelRelay relay) {
        KvHandoff h = request.getHandoff();
        Duration timeout = node.pullTimeout();
        if (request.getDeadlineMs() > 0) {
            long left = request.getDeadlineMs() - node.clock().millis();
            timeout = Duration.ofMillis(Math.max(1, Math.min(timeout.toMillis(), left)));
        }
        KvImport imported;
        Observation pull = Observation.createNotStarted(PULL_OBSERVATION, local.observations())
                .contextualName("kv transfer")
                .highCardinalityKeyValue(KeyValue.of("source", h.getSourceWorkerId()))
                .highCardinalityKeyValue(KeyValue.of("blocks", Integer.toString(h.getBlocksCount())))
                .start();
        try {
            if (relay.cancelled()) {
                throw new HandoffFailure("cancelled", "the client cancelled before the transfer");
            }
            imported = node.puller().pull(h, EngineRequests.prompt(request), EngineRequests.scope(request.getCacheScope()),
                    timeout);
        } catch (HandoffFailure f) {
            failed(pull, f);
            fallBack(request, stream, relay, f);
            return;
        } catch (RuntimeException e) {
            HandoffFailure f = new HandoffFailure("transfer", "pulling the handoff failed: " + e, e);
            failed(pull, f);
            fallBack(request, stream, relay, f);
            return;
        }
        pull.lowCardinalityKeyValue("outcome", "transferred").stop();
        releaseSource(request, true);
        if (relay.cancelled()) {
            imported.abort();
            return;
        }
        RequestHandle handle;
        TokenSink observed = null;
        try {
            int importedTokens = imported.toFetch().size() * local.identity().blockSize();
            GenerateCall call = new GenerateCall(stream, local.identity().id(), local.metrics(), importedTokens);
            observed = ObservedTokenSink.start(call, local.observations(), local.identity().id(), local.engineKind());
            try (Observation.Scope inEngine = ObservedTokenSink.openScope(observed)) {
                handle = node.engine().submitContinuation(EngineRequests.of(request), h.getFirstToken(), h.getRngState(),
                        imported, observed);
            }
        } catch (RuntimeException e) {
            ObservedTokenSink.abandon(observed, e);
            imported.abort();
            stream.fail(CallFailure.of(e));
            return;
        }
        local.metrics().handoffUsed();
        relay.attach(handle);
    }

    private static void failed(Observation pull, HandoffFailure f) {
        pull.lowCardinalityKeyValue("outcome", f.reason()).error(f);
        pull.stop();
    }

    private void fallBack(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay,
                          HandoffFailure f) {
        log.info("{}: handoff of request {} from {} failed ({}: {}); prefilling locally", local.identity().id(),
                request.getRequestId(), request.getHandoff().getSourceWorkerId(), f.reason(), f.getMessage());
        local.metrics().handoffFallback(f.reason());
        releaseSource(request, false);
        if (!relay.cancelled()) {
            local.submit(request, stream, relay, "handoff refused (" + f.reason() + "): " + f.getMessage());
        }
    }

    private void releaseSource(GenerateRequest request, boolean transferred) {
        KvHandoff h = request.getHandoff();
        node.releaser().release(h.getSourceEndpoint(), h.getLeaseId(), transferred);
    }

    @Override
    public boolean servesPrefill() {
        return true;
    }

    @Override
    public void prefill(PrefillRequest request, Replies<PrefillResult> stream, CancelRelay relay) {
        try {
            relay.attach(node.engine().prefill(EngineRequests.of(request),
                    new PrefillCall(local.identity(), node, local.metrics(), request, stream)));
        } catch (RuntimeException e) {
            stream.fail(CallFailure.of(e));
        }
    }

    @Override
    public boolean releaseLease(String leaseId) {
        return node.leases().release(leaseId);
    }

    @Override
    public void close() {
        node.close();
    }
}
