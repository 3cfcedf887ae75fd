package io.flotilla.worker.kv;

import io.flotilla.worker.engine.KvPin;

/**
 * Pinned blocks of one prefill, held for a decode worker until it releases them or {@code expiresAtMs}.
 *
 * @param id          unique for this worker process (it names the worker's epoch)
 * @param requestId   the prefill request
 * @param expiresAtMs milliseconds since the Unix epoch, on the prefill worker's clock
 * @param blocks      blocks pinned
 * @param pin         the engine's pin
 */
public record KvLease(String id, String requestId, long expiresAtMs, int blocks, KvPin pin) {
}
