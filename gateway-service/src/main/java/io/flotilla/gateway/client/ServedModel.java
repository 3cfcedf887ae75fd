package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.EngineCapabilities;

import java.util.Collections;
import java.util.SortedSet;
import java.util.TreeSet;

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
 * @param adapters        LoRA adapters of the model that at least one of its workers serves (loaded or loadable)
 * @param publicPrefixes  whether every worker of the model keeps a tenant-salted request's public prefix shared
 *                        ({@code SALT_AFTER_PUBLIC_PREFIX}); when one salts every block (vLLM's {@code cache_salt}),
 *                        gateways hash salted requests without public blocks, so their hashes match that worker's
 */
public record ServedModel(String name, int blockSize, int workers, String tokenizerId, String tokenizerSource,
                          String kvLayout, String problem, EngineCapabilities capabilities, SortedSet<String> adapters,
                          boolean publicPrefixes) {

    public ServedModel(String name, int blockSize, int workers) {
        this(name, blockSize, workers, "", "", "", "", EngineCapabilities.getDefaultInstance());
    }

    /** A model whose workers serve no adapter and do not keep public prefixes shared. */
    public ServedModel(String name, int blockSize, int workers, String tokenizerId, String tokenizerSource,
                       String kvLayout, String problem, EngineCapabilities capabilities) {
        this(name, blockSize, workers, tokenizerId, tokenizerSource, kvLayout, problem, capabilities, new TreeSet<>(),
                false);
    }

    public ServedModel {
        adapters = Collections.unmodifiableSortedSet(new TreeSet<>(adapters));
    }

    /** Whether requests for this model can be served. */
    public boolean routable() {
        return problem.isEmpty();
    }
}
