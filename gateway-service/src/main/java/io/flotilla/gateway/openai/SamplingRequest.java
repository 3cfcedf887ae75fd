package io.flotilla.gateway.openai;

import java.util.List;
import java.util.Map;

/**
 * Sampling as the client asked for it, defaults filled in (OpenAI's, or vLLM's for its extensions).
 * Each field reaches the engine ({@code SamplingParams} / {@code StopConditions}) or, when the model's
 * engines cannot honour it, the request is refused naming it.
 *
 * @param temperature       [0, 2]; default 1
 * @param topP              (0, 1]; default 1
 * @param topK              vLLM's {@code top_k}; 0 (or -1) is off
 * @param minP              vLLM's {@code min_p} in [0, 1]; 0 is off
 * @param presencePenalty   [-2, 2]; default 0
 * @param frequencyPenalty  [-2, 2]; default 0
 * @param repetitionPenalty vLLM's {@code repetition_penalty} in (0, 2]; 1 is off
 * @param logitBias         token id → bias in [-100, 100]
 * @param seed              null when not given
 * @param ignoreEos         vLLM's {@code ignore_eos}
 * @param stopTokenIds      vLLM's {@code stop_token_ids}: the engine stops after any of these
 */
public record SamplingRequest(double temperature, double topP, int topK, double minP, double presencePenalty,
                              double frequencyPenalty, double repetitionPenalty, Map<Integer, Float> logitBias, Long seed,
                              boolean ignoreEos, List<Integer> stopTokenIds) {

    public static final SamplingRequest DEFAULT = new SamplingRequest(1, 1, 0, 0, 0, 0, 1, Map.of(), null, false, List.of());

    public SamplingRequest {
        logitBias = Map.copyOf(logitBias);
        stopTokenIds = List.copyOf(stopTokenIds);
    }
}
