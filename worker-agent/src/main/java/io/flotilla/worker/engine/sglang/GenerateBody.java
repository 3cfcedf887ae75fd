package io.flotilla.worker.engine.sglang;

import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.SamplingOptions;
import io.flotilla.worker.engine.openai.SamplingFields;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Request bodies for SGLang's native {@code POST /generate} (SGLang {@code GenerateReqInput}) with a token-id
 * prompt: {@code input_ids}, {@code sampling_params} ({@code max_new_tokens} always, and only when set —
 * the client's fields alone, so that the model's defaults apply to the rest — {@code temperature},
 * {@code stop_token_ids}, {@code ignore_eos}, {@code sampling_seed}, {@code top_p}, {@code top_k}, {@code min_p}, {@code presence_penalty}, {@code frequency_penalty},
 * {@code repetition_penalty}, {@code logit_bias} and structured output as {@code json_schema} — SGLang's
 * {@code SamplingParams} names), {@code stream: true} and {@code rid} (the request id, which SGLang's abort
 * and logs use). Stop strings are not sent (SGLang refuses them under {@code --skip-tokenizer-init}; the
 * gateway matches them anyway). Log-probabilities are not offered ({@link #CAPABILITIES}).
 */
final class GenerateBody {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** What this body carries to SGLang; every other feature is refused before anything is sent. */
    static final EngineCapabilities CAPABILITIES = EngineCapabilities.newBuilder()
            .addAllFeatures(java.util.List.of(SamplingFeature.SAMPLING_FEATURE_TOP_P, SamplingFeature.SAMPLING_FEATURE_TOP_K,
                    SamplingFeature.SAMPLING_FEATURE_MIN_P, SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY,
                    SamplingFeature.SAMPLING_FEATURE_FREQUENCY_PENALTY, SamplingFeature.SAMPLING_FEATURE_REPETITION_PENALTY,
                    SamplingFeature.SAMPLING_FEATURE_LOGIT_BIAS, SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT,
                    SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA))
            .build();

    private GenerateBody() {
    }

    static String stream(EngineRequest r) {
        ObjectNode body = JSON.createObjectNode();
        ArrayNode ids = body.putArray("input_ids");
        for (int t : r.promptTokens()) {
            ids.add(t);
        }
        ObjectNode sampling = body.putObject("sampling_params");
        sampling.put("max_new_tokens", r.maxTokens());
        SamplingFields.putIfSet(sampling, "temperature", r.temperature());
        if (r.seed() != null) {
            sampling.put("sampling_seed", r.seed());
        }
        if (r.stopTokenIds().length > 0) {
            ArrayNode stop = sampling.putArray("stop_token_ids");
            for (int t : r.stopTokenIds()) {
                stop.add(t);
            }
        }
        if (r.ignoreEos()) {
            sampling.put("ignore_eos", true);
        }
        options(sampling, r.options());
        body.put("stream", true);
        body.put("rid", r.requestId());
        return body.toString();
    }

    private static void options(ObjectNode sampling, SamplingOptions o) {
        SamplingFields.put(sampling, o);
        switch (o.format().kind()) {
            case JSON_OBJECT -> sampling.put("json_schema", "{\"type\": \"object\"}");
            case JSON_SCHEMA -> sampling.put("json_schema", o.format().schema());
            default -> {
            }
        }
    }
}
