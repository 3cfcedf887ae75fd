package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.EngineCapabilities;

/**
 * A model that at least one live, routable worker serves.
 *
 * @param name      model name
 * @param blockSize KV block size its workers advertise (the most common one, should they disagree)
 * @param workers   routable workers that can run it end to end (aggregated or decode)
 * @param tokenizerId     tokenizer id the workers hash with ("" from workers that do not register one)
 * @param tokenizerSource where the workers say that tokenizer can be loaded
 * @param kvLayout        KV layout the workers advertise
 * @param problem         why the gateway cannot route the model ("" when it can): its block-hash namespace
 *                        differs from the workers', or they disagree among themselves
 * @param capabilities    what every one of those workers' engines honours (the intersection: the router may
 *                        pick any of them)
 */
public record ServedModel(String name, int blockSize, int workers, String tokenizerId, String tokenizerSource,
                          String kvLayout, String problem, EngineCapabilities capabilities) {

    public ServedModel(String name, int blockSize, int workers) {
        this(name, blockSize, workers, "", "", "", "", EngineCapabilities.getDefaultInstance());
    }

    /** Whether requests for this model can be served. */
    public boolean routable() {
        return problem.isEmpty();
    }
}
