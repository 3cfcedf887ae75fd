package io.flotilla.gateway.generation;

import io.flotilla.gateway.output.ResponseShape;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.hash.ScopedHasher;
import io.flotilla.protocol.v1.SamplingParams;

import java.util.List;

/**
 * One generation request, ready for the request path: tokenized, checked against the model's context,
 * with the model's block hasher. Immutable (the arrays are never modified).
 *
 * @param requestId    id sent to router and workers (and, prefixed, to the client)
 * @param model        served model name
 * @param tenant       tenant for routing and accounting
 * @param promptTokens prompt token ids
 * @param maxTokens    output token limit (per choice)
 * @param sampling     the engine's sampling parameters, checked against the model's capabilities
 * @param choices      completions of the prompt (n), computed on one worker
 * @param stopStrings  stop strings, matched on the decoded text (and sent to the engine)
 * @param stopTokenIds stop token ids for the engine: the client's and the single-token stop strings
 * @param ignoreEos    keep generating past end-of-sequence
 * @param allowDisagg  the router may pick a separate prefill worker
 * @param hasher       block hasher of the model's namespace and its workers' block size, in the request's
 *                     {@link KvScope} (its LoRA adapter, and its tenant's salt when the model or key isolates tenants)
 * @param tokenizer    the model's tokenizer (for decoding the output)
 * @param response     how the output becomes the response (parsers, logprobs, choices)
 */
public record GenerationJob(String requestId, String model, String tenant, int[] promptTokens, int maxTokens,
                            SamplingParams sampling, int choices, List<String> stopStrings,
                            int[] stopTokenIds, boolean ignoreEos, boolean allowDisagg, ScopedHasher hasher,
                            Tokenizer tokenizer, ResponseShape response, long[] promptHashes) {

    /** A job whose prompt's block hashes are computed when first needed. */
    public GenerationJob(String requestId, String model, String tenant, int[] promptTokens, int maxTokens,
                         SamplingParams sampling, int choices, List<String> stopStrings, int[] stopTokenIds,
                         boolean ignoreEos, boolean allowDisagg, ScopedHasher hasher, Tokenizer tokenizer,
                         ResponseShape response) {
        this(requestId, model, tenant, promptTokens, maxTokens, sampling, choices, stopStrings, stopTokenIds, ignoreEos,
                allowDisagg, hasher, tokenizer, response, null);
    }

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
