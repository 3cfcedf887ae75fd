package io.flotilla.worker.engine.openai;

import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.SamplingFeature;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.SamplingOptions;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.List;

/**
 * Request bodies for {@code POST /v1/completions} on vLLM and SGLang, with a token-id prompt:
 * {@code "prompt": [ids]}, {@code max_tokens} (always: the gateway's budget, since vLLM's completions
 * default is 16 tokens), {@code seed}, {@code stop_token_ids}, {@code ignore_eos} (vLLM and SGLang extensions)
 * when set, and for streams {@code "stream": true, "stream_options": {"include_usage": true}}. Every sampling
 * parameter goes in exactly when the client set it (so the model's generation_config defaults apply to the rest,
 * as when the client calls the engine directly), under the names both servers read on this endpoint:
 * {@code temperature}, {@code top_p},
 * {@code top_k}, {@code min_p}, {@code presence_penalty}, {@code frequency_penalty},
 * {@code repetition_penalty}, {@code logit_bias} (token id strings to biases), {@code stop}
 * (strings), {@code logprobs} (the number of alternatives; with {@code return_tokens_as_token_ids} so
 * that tokens and alternatives come back as {@code "token_id:N"}) and structured output as OpenAI's
 * {@code response_format} ({@code json_object}, or {@code json_schema} with {@code name} and
 * {@code schema}), which vLLM turns into its structured-outputs parameters and SGLang into its
 * grammar backend's. A request on a LoRA adapter names the
 * adapter as its {@code model} (vLLM serves each loaded adapter under its name); a tenant-salted request
 * carries {@code cache_salt} (vLLM hashes it into the first block, so its KV matches no other salt's).
 *
 * <p>Disaggregated prefill/decode follows vLLM's {@code kv_transfer_params} protocol (NixlConnector
 * and compatible connectors): the prefill runs on one engine as a non-streamed request with
 * {@code max_tokens: 1} and {@code kv_transfer_params: {"do_remote_decode": true, ...}}; the
 * response's {@code kv_transfer_params} go unchanged into the decode engine's request.
 */
final class CompletionBody {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** Most alternatives per token vLLM returns by default ({@code --max-logprobs 20}). */
    static final int MAX_TOP_LOGPROBS = 20;

    /** Everything this body builder sends: what vLLM's and SGLang's completions endpoints accept. */
    static final EngineCapabilities CAPABILITIES = EngineCapabilities.newBuilder()
            .addAllFeatures(List.of(SamplingFeature.SAMPLING_FEATURE_TOP_P, SamplingFeature.SAMPLING_FEATURE_TOP_K,
                    SamplingFeature.SAMPLING_FEATURE_MIN_P, SamplingFeature.SAMPLING_FEATURE_PRESENCE_PENALTY,
                    SamplingFeature.SAMPLING_FEATURE_FREQUENCY_PENALTY, SamplingFeature.SAMPLING_FEATURE_REPETITION_PENALTY,
                    SamplingFeature.SAMPLING_FEATURE_LOGIT_BIAS, SamplingFeature.SAMPLING_FEATURE_LOGPROBS,
                    SamplingFeature.SAMPLING_FEATURE_JSON_OBJECT, SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA))
            .setMaxTopLogprobs(MAX_TOP_LOGPROBS)
            .build();

    private CompletionBody() {
    }

    /** What every engine would refuse anyway; checked before anything is sent. */
    static void validate(EngineRequest r) {
        if (r.promptTokens().length == 0) {
            throw new InvalidRequestException("empty prompt");
        }
        if (r.maxTokens() < 1) {
            throw new InvalidRequestException("max_tokens must be at least 1, got " + r.maxTokens());
        }
        for (int t : r.promptTokens()) {
            if (t < 0) {
                throw new InvalidRequestException("negative token id " + t);
            }
        }
    }

    /** A streamed generation; {@code kvTransferParams} (JSON object text) may be null. */
    static String stream(String model, EngineRequest r, boolean returnTokenIds, String kvTransferParams) {
        ObjectNode body = base(model, r, r.maxTokens(), returnTokenIds);
        body.put("stream", true);
        body.putObject("stream_options").put("include_usage", true);
        if (kvTransferParams != null) {
            body.set("kv_transfer_params", parseObject(kvTransferParams));
        }
        return body.toString();
    }

    /** A prefill whose KV a remote decode engine will pull: one token, not streamed. */
    static String remotePrefill(String model, EngineRequest r, boolean returnTokenIds) {
        ObjectNode body = base(model, r, 1, returnTokenIds);
        body.put("stream", false);
        ObjectNode kv = body.putObject("kv_transfer_params");
        kv.put("do_remote_decode", true);
        kv.put("do_remote_prefill", false);
        kv.putNull("remote_engine_id");
        kv.putNull("remote_block_ids");
        kv.putNull("remote_host");
        kv.putNull("remote_port");
        return body.toString();
    }

    private static ObjectNode base(String model, EngineRequest r, int maxTokens, boolean returnTokenIds) {
        ObjectNode body = JSON.createObjectNode();
        body.put("model", r.scope().hasLora() ? r.scope().loraName() : model);
        if (r.scope().salted()) {
            body.put("cache_salt", r.scope().tenantSalt());
        }
        ArrayNode prompt = body.putArray("prompt");
        for (int t : r.promptTokens()) {
            prompt.add(t);
        }
        body.put("max_tokens", maxTokens);
        SamplingFields.putIfSet(body, "temperature", r.temperature());
        if (r.seed() != null) {
            body.put("seed", r.seed());
        }
        if (r.stopTokenIds().length > 0) {
            ArrayNode stop = body.putArray("stop_token_ids");
            for (int t : r.stopTokenIds()) {
                stop.add(t);
            }
        }
        if (r.ignoreEos()) {
            body.put("ignore_eos", true);
        }
        if (returnTokenIds) {
            body.put("return_token_ids", true);
        }
        sampling(body, r.options());
        return body;
    }

    private static void sampling(ObjectNode body, SamplingOptions o) {
        SamplingFields.put(body, o);
        if (!o.stopStrings().isEmpty()) {
            ArrayNode stop = body.putArray("stop");
            o.stopStrings().forEach(stop::add);
        }
        if (o.logprobs()) {
            body.put("logprobs", o.topLogprobs());
            body.put("return_tokens_as_token_ids", true);
        }
        SamplingOptions.OutputFormat f = o.format();
        if (f.kind() == SamplingOptions.OutputFormat.Kind.JSON_OBJECT) {
            body.putObject("response_format").put("type", "json_object");
        } else if (f.kind() == SamplingOptions.OutputFormat.Kind.JSON_SCHEMA) {
            ObjectNode schema = body.putObject("response_format").put("type", "json_schema").putObject("json_schema");
            schema.put("name", f.name().isEmpty() ? "output" : f.name());
            schema.set("schema", parseSchema(f.schema()));
        }
    }

    private static JsonNode parseSchema(String json) {
        try {
            return JSON.readTree(json);
        } catch (JacksonException e) {
            throw new InvalidRequestException("json_schema is not JSON: " + e.getOriginalMessage());
        }
    }

    private static JsonNode parseObject(String json) {
        try {
            JsonNode n = JSON.readTree(json);
            if (!n.isObject()) {
                throw new InvalidRequestException("kv_transfer_params must be a JSON object");
            }
            return n;
        } catch (JacksonException e) {
            throw new InvalidRequestException("kv_transfer_params is not JSON: " + e.getOriginalMessage());
        }
    }
}
