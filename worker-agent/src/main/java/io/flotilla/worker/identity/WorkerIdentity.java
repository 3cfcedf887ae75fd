package io.flotilla.worker.identity;

import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.WorkerRole;

/**
 * Who one worker is for this process lifetime.
 *
 * @param id               worker id, stable across restarts
 * @param epoch            fresh random 64-bit value per process start; consumers drop older epochs
 * @param role             aggregated, prefill or decode
 * @param namespace        block-hash namespace (model, tokenizer, KV layout)
 * @param blockSize        tokens per KV block
 * @param endpoint         host:port of the WorkerService
 * @param transferEndpoint host:port of the KV transfer agent
 * @param managementEndpoint host:port of actuator
 */
public record WorkerIdentity(String id, long epoch, WorkerRole role, KvNamespace namespace, int blockSize,
                             String endpoint, String transferEndpoint, String managementEndpoint) {

    public String model() {
        return namespace.model();
    }

    public String kvLayout() {
        return namespace.kvLayout();
    }
}
