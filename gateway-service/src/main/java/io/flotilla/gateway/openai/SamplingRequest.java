package io.flotilla.gateway.openai;

import java.util.List;
import java.util.Map;

/**
 * Sampling as the client asked for it: a field the client did not send is null, and stays unset on the way to the
 * engine (vLLM and SGLang apply the model's own generation defaults to exactly those fields); a field it sent keeps
 * its value as a double, so a decimal reaches the engine as written. Each field reaches the engine
 * ({@code SamplingParams} / {@code StopConditions}) or, when the model's engines cannot honour it, the request is
 * refused naming it.
 *
 * @param temperature       [0, 2], or null
 * @param topP              (0, 1], or null
 * @param topK              vLLM's {@code top_k}; 0 or -1 keep every token; or null
 * @param minP              vLLM's {@code min_p} in [0, 1], or null
 * @param presencePenalty   [-2, 2], or null
 * @param frequencyPenalty  [-2, 2], or null
 * @param repetitionPenalty vLLM's {@code repetition_penalty} in (0, 2], or null
 * @param logitBias         token id → bias in [-100, 100]
 * @param seed              null when not given
 * @param ignoreEos         vLLM's {@code ignore_eos}
 * @param stopTokenIds      vLLM's {@code stop_token_ids}: the engine stops after any of these
 */
public record SamplingRequest(Double temperature, Double topP, Integer topK, Double minP, Double presencePenalty,
                              Double frequencyPenalty, Double repetitionPenalty, Map<Integer, Double> logitBias, Long seed,
                              boolean ignoreEos, List<Integer> stopTokenIds) {

    /** Nothing set: the engine's (the model's) defaults throughout. */
    public static final SamplingRequest DEFAULT = new SamplingRequest(null, null, null, null, null, null, null, Map.of(),
            null, false, List.of());

    public SamplingRequest {
        logitBias = Map.copyOf(logitBias);
        stopTokenIds = List.copyOf(stopTokenIds);
    }

    /** Whether top_p is set below 1 (it then truncates the distribution). */
    boolean topPActive() {
        return topP != null && topP < 1;
    }

    boolean topKActive() {
        return topK != null && topK > 0;
    }

    boolean minPActive() {
        return minP != null && minP > 0;
    }

    boolean presencePenaltyActive() {
        return presencePenalty != null && presencePenalty != 0;
    }

    boolean frequencyPenaltyActive() {
        return frequencyPenalty != null && frequencyPenalty != 0;
    }

    boolean repetitionPenaltyActive() {
        return repetitionPenalty != null && repetitionPenalty != 1;
    }
}
