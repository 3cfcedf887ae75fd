package io.flotilla.gateway.openai;

import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Validates the sampling fields of a request into a {@link SamplingRequest}; ranges as OpenAI and vLLM state them. */
public final class SamplingParser {

    /** Most {@code logit_bias} entries (OpenAI's limit). */
    static final int MAX_LOGIT_BIAS = 300;
    /** Most {@code stop_token_ids}. */
    static final int MAX_STOP_TOKEN_IDS = 64;

    private SamplingParser() {
    }

    public static SamplingRequest parse(JsonParams p) {
        Double temperature = p.number("temperature", 0, false, 2);
        Double topP = p.number("top_p", 0, true, 1);
        Long topK = p.integer("top_k", -1, Integer.MAX_VALUE);
        Double minP = p.number("min_p", 0, false, 1);
        Double presence = p.number("presence_penalty", -2, false, 2);
        Double frequency = p.number("frequency_penalty", -2, false, 2);
        Double repetition = p.number("repetition_penalty", 0, true, 2);
        Long seed = p.integer("seed", Long.MIN_VALUE, Long.MAX_VALUE);
        boolean ignoreEos = Boolean.TRUE.equals(p.bool("ignore_eos"));
        return new SamplingRequest(temperature, topP, topK == null ? null : topK.intValue(), minP, presence, frequency,
                repetition, logitBias(p), seed, ignoreEos, stopTokenIds(p));
    }

    /** {@code {"<token id>": bias}}, biases in [-100, 100]. */
    private static Map<Integer, Double> logitBias(JsonParams p) {
        JsonNode bias = p.node("logit_bias");
        Map<Integer, Double> out = new LinkedHashMap<>();
        if (bias == null) {
            return out;
        }
        if (!bias.isObject()) {
            throw p.wrongType("logit_bias", "an object mapping token ids to biases", bias);
        }
        if (bias.size() > MAX_LOGIT_BIAS) {
            throw ApiError.invalid("logit_bias", "Invalid 'logit_bias': at most " + MAX_LOGIT_BIAS + " tokens may be biased.");
        }
        for (Map.Entry<String, JsonNode> e : bias.properties()) {
            int id;
            try {
                id = Integer.parseInt(e.getKey());
            } catch (NumberFormatException nfe) {
                id = -1;
            }
            if (id < 0) {
                throw ApiError.invalid("logit_bias", "Invalid 'logit_bias': '" + e.getKey() + "' is not a token id.");
            }
            double v = e.getValue().isNumber() ? e.getValue().doubleValue() : Double.NaN;
            if (!(v >= -100 && v <= 100)) {
                throw ApiError.invalid("logit_bias", "Invalid 'logit_bias' of token " + id
                        + ": expected a number in [-100, 100], but got " + e.getValue() + " instead.");
            }
            out.put(id, v);
        }
        return out;
    }

    private static List<Integer> stopTokenIds(JsonParams p) {
        JsonNode ids = p.node("stop_token_ids");
        List<Integer> out = new ArrayList<>();
        if (ids == null) {
            return out;
        }
        if (!ids.isArray()) {
            throw p.wrongType("stop_token_ids", "an array of token ids", ids);
        }
        if (ids.size() > MAX_STOP_TOKEN_IDS) {
            throw ApiError.invalid("stop_token_ids", "Invalid 'stop_token_ids': at most " + MAX_STOP_TOKEN_IDS + " ids.");
        }
        for (int i = 0; i < ids.size(); i++) {
            JsonNode t = ids.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0) {
                throw ApiError.invalid("stop_token_ids", "Invalid 'stop_token_ids[" + i + "]': expected a non-negative "
                        + "integer token id, but got " + t + " instead.");
            }
            out.add(t.intValue());
        }
        return out;
    }
}
