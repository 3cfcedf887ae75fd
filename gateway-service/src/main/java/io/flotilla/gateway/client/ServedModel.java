package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.EngineCapabilities;

/**
 * A model that at least one live, routable worker serves.
 *
 * @param name         model name
 * @param blockSize    KV block size its workers advertise (the most common one, should they disagree)
 * @param workers      routable workers that can run it end to end (aggregated or decode)
 * @param capabilities what every one of those workers' engines honours (the intersection: the router
 *                     may pick any of them)
 */
public record ServedModel(String name, int blockSize, int workers, EngineCapabilities capabilities) {

    public ServedModel(String name, int blockSize, int workers) {
        this(name, blockSize, workers, EngineCapabilities.getDefaultInstance());
    }
}
