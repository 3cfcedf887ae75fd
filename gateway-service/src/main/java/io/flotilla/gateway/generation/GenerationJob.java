package io.flotilla.gateway.generation;

import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.hash.ScopedHasher;

import java.util.List;

/**
 * One generation request, ready for the request path: tokenized, checked against the model's context,
 * with the model's block hasher. Immutable (the arrays are never modified).
 *
 * @param requestId    id sent to router and workers (and, prefixed, to the client)
 * @param model        served model name
 * @param tenant       tenant for routing and accounting
 * @param promptTokens prompt token ids
 * @param maxTokens    output token limit
 * @param temperature  sampling temperature
 * @param topP         nucleus sampling mass
 * @param seed         sampling seed, null when none
 * @param stopStrings  stop strings, matched on the decoded text
 * @param stopTokenIds single-token stop strings, passed to the engine
 * @param ignoreEos    keep generating past end-of-sequence
 * @param allowDisagg  the router may pick a separate prefill worker
 * @param hasher       block hasher of the model's namespace and its workers' block size, in the request's
 *                     {@link KvScope} (its LoRA adapter, and its tenant's salt when the model or key isolates tenants)
 * @param tokenizer    the model's tokenizer (for decoding the output)
 */
public record GenerationJob(String requestId, String model, String tenant, int[] promptTokens, int maxTokens,
                            double temperature, double topP, Long seed, List<String> stopStrings,
                            int[] stopTokenIds, boolean ignoreEos, boolean allowDisagg, ScopedHasher hasher,
                            Tokenizer tokenizer) {

    /** The adapter, tenant salt and public prefix of the request's KV. */
    public KvScope scope() {
        return hasher.scope();
    }

    /** The scope as workers receive it. */
    public io.flotilla.protocol.v1.CacheScope cacheScope() {
        KvScope s = hasher.scope();
        return io.flotilla.protocol.v1.CacheScope.newBuilder().setLoraName(s.loraName()).setTenantSalt(s.tenantSalt())
                .setPublicBlocks(s.publicBlocks()).build();
    }

    /** The name the client asked for: the adapter's when the request runs on one, else the model's. */
    public String requestedModel() {
        return hasher.scope().hasLora() ? hasher.scope().loraName() : model;
    }
}
