package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.worker.kv.HandoffFailure;

/**
 * The path of a worker without a KV transfer side (aggregated role, or an engine that cannot hand KV
 * off): a prompt's KV comes only from this worker's own tiers, which the engine reuses or onboards
 * (host memory, disk) on submit. A handoff is refused ({@code unsupported}) and prefilled here;
 * Prefill is not served.
 */
public final class LocalKvPath implements HandoffPath {

    private final LocalGenerate local;

    public LocalKvPath(LocalGenerate local) {
        this.local = local;
    }

    @Override
    public void decode(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay) {
        local.refuse(request, stream, relay, new HandoffFailure("unsupported", local.identity().id()
                + " has no KV transfer agent (role " + local.identity().role() + ")"));
    }

    @Override
    public boolean servesPrefill() {
        return false;
    }

    @Override
    public void prefill(PrefillRequest request, Replies<PrefillResult> stream, CancelRelay relay) {
        throw new UnsupportedOperationException("this worker serves no Prefill");
    }

    @Override
    public boolean releaseLease(String leaseId) {
        return false;
    }

    @Override
    public void close() {
    }
}
