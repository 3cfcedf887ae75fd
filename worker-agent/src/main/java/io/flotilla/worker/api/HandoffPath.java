package io.flotilla.worker.api;

import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;

/**
 * How a worker brings a prompt's KV into its engine from elsewhere instead of computing it, chosen once
 * per worker from what its engine can do ({@code WorkerFleet}):
 * <ul>
 *   <li>{@link AgentHandoffPath}: Flotilla's transfer agent moves the bytes between workers (prefill
 *       pins and leases them, decode pulls, verifies and imports them);</li>
 *   <li>{@link EngineHandoffPath}: the engine's own KV connector moves them (vLLM
 *       {@code kv_transfer_params}); the agent only carries the parameters;</li>
 *   <li>{@link LocalKvPath}: no transfer; the KV comes from the engine's own tiers — the device pool
 *       and, below it, host memory and disk, which the engine onboards from when that beats
 *       recomputing — and a handoff is refused and prefilled here.</li>
 * </ul>
 * Every path ends a refused or failed handoff in a local prefill of the whole prompt (which onboards
 * from this worker's tiers what they hold), with the reason in the last chunk.
 */
public interface HandoffPath extends AutoCloseable {

    /** Serves a Generate that carries a handoff; returns without waiting for any transfer. */
    void decode(GenerateRequest request, Replies<GenerateChunk> stream, CancelRelay relay);

    /** Whether this path serves Prefill (prefill-only execution for a decode elsewhere). */
    boolean servesPrefill();

    /** Serves a valid Prefill; only called when {@link #servesPrefill()}. */
    void prefill(PrefillRequest request, Replies<PrefillResult> stream, CancelRelay relay);

    /** ReleaseKvLease: unpins a handoff's blocks; false when no such lease is held. */
    boolean releaseLease(String leaseId);

    /** Stops transfers and releases what the path holds; after the engine closed. */
    @Override
    void close();
}
