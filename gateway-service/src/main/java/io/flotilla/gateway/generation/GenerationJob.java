package io.flotilla.gateway.generation;

import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.protocol.hash.BlockHasher;

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
 * @param hasher       block hasher of the model's namespace and its workers' block size
 * @param tokenizer    the model's tokenizer (for decoding the output)
 */
public record GenerationJob(String requestId, String model, String tenant, int[] promptTokens, int maxTokens,
                            double temperature, double topP, Long seed, List<String> stopStrings,
                            int[] stopTokenIds, boolean ignoreEos, boolean allowDisagg, BlockHasher hasher,
                            Tokenizer tokenizer) {
}
