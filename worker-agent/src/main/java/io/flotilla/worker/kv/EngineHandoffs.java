package io.flotilla.worker.kv;

import io.flotilla.worker.engine.EngineKvTransfer;

import java.time.Clock;
import java.time.Duration;

/**
 * The disaggregated side of a worker whose engine moves the KV itself ({@link EngineKvTransfer}, vLLM
 * {@code kv_transfer_params}): it serves {@code Prefill} by asking its engine for transfer parameters
 * and continues handoffs by giving them to its engine. No transfer agent, no leases: the engines
 * hold and free the blocks.
 *
 * @param engine     the engine's transfer protocol
 * @param clock      stamps and checks handoff expiry
 * @param handoffTtl how long a handoff from this worker stays usable; keep it below the prefill
 *                   engine's own timeout for unread KV (vLLM {@code VLLM_NIXL_ABORT_REQUEST_TIMEOUT},
 *                   480 s by default), or a late decode engine finds the blocks gone
 */
public record EngineHandoffs(EngineKvTransfer engine, Clock clock, Duration handoffTtl) {

    /** Expiry, in milliseconds since the epoch, of a handoff made now. */
    public long expiryFromNow() {
        return clock.millis() + handoffTtl.toMillis();
    }
}
