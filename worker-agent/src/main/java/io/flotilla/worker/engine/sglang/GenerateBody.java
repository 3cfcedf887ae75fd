package io.flotilla.worker.engine.sglang;

import io.flotilla.worker.engine.EngineRequest;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Request bodies for SGLang's native {@code POST /generate} (SGLang {@code GenerateReqInput}) with a token-id
 * prompt: {@code input_ids}, {@code sampling_params} ({@code max_new_tokens}, {@code temperature},
 * {@code stop_token_ids}, {@code ignore_eos}, {@code sampling_seed} when the request has a seed),
 * {@code stream: true} and {@code rid} (the request id, which SGLang's abort and logs use).
 */
final class GenerateBody {

    private static final JsonMapper JSON = JsonMapper.builder().build();

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
        sampling.put("temperature", r.temperature());
        if (r.seed() != null) {
            sampling.put("sampling_seed", r.seed());
        }
        if (r.stopTokenIds().length > 0) {
            ArrayNode stop = sampling.putArray("stop_token_ids");
            for (int t : r.stopTokenIds()) {
                stop.add(t);
            }
        }
        sampling.put("ignore_eos", r.ignoreEos());
        body.put("stream", true);
        body.put("rid", r.requestId());
        return body.toString();
    }
}
