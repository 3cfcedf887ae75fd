package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.SamplingOptions;
import tools.jackson.databind.node.ObjectNode;

/**
 * The sampling knobs that vLLM's and SGLang's completions bodies and SGLang's native
 * {@code sampling_params} all name alike: {@code top_p}, {@code top_k}, {@code min_p},
 * {@code presence_penalty}, {@code frequency_penalty}, {@code repetition_penalty} and
 * {@code logit_bias} (token id strings to biases), each written only when it is set, so an engine
 * keeps its own default for the rest.
 */
public final class SamplingFields {

    private SamplingFields() {
    }

    public static void put(ObjectNode target, SamplingOptions o) {
        if (o.topPActive()) {
            target.put("top_p", o.topP());
        }
        if (o.topK() > 0) {
            target.put("top_k", o.topK());
        }
        if (o.minP() > 0) {
            target.put("min_p", o.minP());
        }
        if (o.presencePenalty() != 0) {
            target.put("presence_penalty", o.presencePenalty());
        }
        if (o.frequencyPenalty() != 0) {
            target.put("frequency_penalty", o.frequencyPenalty());
        }
        if (o.repetitionPenaltyActive()) {
            target.put("repetition_penalty", o.repetitionPenalty());
        }
        if (!o.logitBias().isEmpty()) {
            ObjectNode bias = target.putObject("logit_bias");
            o.logitBias().forEach((id, v) -> bias.put(Integer.toUnsignedString(id), v.doubleValue()));
        }
    }
}
