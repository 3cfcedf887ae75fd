package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.SamplingOptions;
import tools.jackson.databind.node.ObjectNode;

/**
 * The sampling knobs that vLLM's and SGLang's completions bodies and SGLang's native
 * {@code sampling_params} all name alike: {@code top_p}, {@code top_k}, {@code min_p},
 * {@code presence_penalty}, {@code frequency_penalty}, {@code repetition_penalty} and
 * {@code logit_bias} (token id strings to biases), each written exactly when the client set it and
 * with its value, so the engine applies the model's own defaults (vLLM's {@code --generation-config
 * auto}, SGLang's) to the rest, as it would for the client's request sent to it directly.
 */
public final class SamplingFields {

    private SamplingFields() {
    }

    public static void put(ObjectNode target, SamplingOptions o) {
        putIfSet(target, "top_p", o.topP());
        if (o.topK() != null) {
            target.put("top_k", o.topK());
        }
        putIfSet(target, "min_p", o.minP());
        putIfSet(target, "presence_penalty", o.presencePenalty());
        putIfSet(target, "frequency_penalty", o.frequencyPenalty());
        putIfSet(target, "repetition_penalty", o.repetitionPenalty());
        if (!o.logitBias().isEmpty()) {
            ObjectNode bias = target.putObject("logit_bias");
            o.logitBias().forEach((id, v) -> bias.put(Integer.toUnsignedString(id), v));
        }
    }

    /** {@code name} with {@code value}, when the client set it. */
    public static void putIfSet(ObjectNode target, String name, Double value) {
        if (value != null) {
            target.put(name, value);
        }
    }
}
