package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.JsonParams;
import tools.jackson.databind.JsonNode;

import java.util.List;

/**
 * The Responses fields of features this server does not have ({@code background}, {@code conversation},
 * {@code prompt}, {@code include}, {@code reasoning.effort}, obfuscated streams, …): a 400
 * {@code unsupported_parameter} naming each, unless it is sent with its "off" value. Stateless.
 */
final class ResponseRefusals {

    private ResponseRefusals() {
    }

    /** Features this server does not have: a 400 naming each, unless sent with its "off" value. */
    static void refuseUnsupported(JsonParams p) {
        if (Boolean.TRUE.equals(p.bool("background"))) {
            throw ApiError.unsupported("background", "Unsupported parameter 'background': responses run in the "
                    + "foreground only; use stream: true to see output as it is made.");
        }
        for (String field : List.of("conversation", "prompt", "prompt_cache_key", "max_tool_calls")) {
            if (p.given(field)) {
                throw ApiError.unsupported(field, "Unsupported parameter '" + field + "': "
                        + switch (field) {
                            case "conversation" -> "conversations are not supported; continue a stored response with "
                                    + "'previous_response_id'.";
                            case "prompt" -> "stored prompt templates are not supported; send 'instructions' and 'input'.";
                            case "prompt_cache_key" -> "requests are placed by the KV they share, without a cache key.";
                            default -> "hosted tools are not supported, and function calls are not capped.";
                        });
            }
        }
        JsonNode include = p.node("include");
        if (include != null && (!include.isArray() || !include.isEmpty())) {
            throw ApiError.unsupported("include", "Unsupported parameter 'include': no additional output data "
                    + "(encrypted reasoning, log-probabilities, hosted tools' results) is available.");
        }
        Long top = p.integer("top_logprobs", 0, 20);
        if (top != null && top > 0) {
            throw ApiError.unsupported("top_logprobs", "Unsupported parameter 'top_logprobs' on /v1/responses: "
                    + "log-probabilities are returned by /v1/chat/completions.");
        }
        String truncation = p.string("truncation");
        if (truncation != null && !truncation.equals("disabled")) {
            throw ApiError.unsupported("truncation", "Unsupported value for 'truncation': '" + truncation + "'. Only "
                    + "'disabled' is supported: a conversation longer than the model's context is refused, never cut.");
        }
        String tier = p.string("service_tier");
        if (tier != null && !tier.equals("auto") && !tier.equals("default")) {
            throw ApiError.unsupported("service_tier", "Unsupported value for 'service_tier': '" + tier
                    + "'. This server has one tier ('auto' or 'default').");
        }
        JsonNode reasoning = p.node("reasoning");
        if (reasoning != null) {
            if (!reasoning.isObject()) {
                throw p.wrongType("reasoning", "an object", reasoning);
            }
            for (String key : reasoning.propertyNames()) {
                if (!reasoning.get(key).isNull()) {
                    throw ApiError.unsupported("reasoning." + key, "Unsupported parameter 'reasoning." + key + "': "
                            + "the model reasons as its chat template tells it; its reasoning comes back as reasoning "
                            + "items, and no effort or summary can be set.");
                }
            }
        }
    }

    static void streamOptions(JsonParams p, boolean stream) {
        JsonNode options = p.node("stream_options");
        if (options == null) {
            return;
        }
        if (!stream) {
            throw ApiError.invalid("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
        }
        if (!options.isObject()) {
            throw p.wrongType("stream_options", "an object", options);
        }
        for (String key : options.propertyNames()) {
            JsonNode v = options.get(key);
            if (!key.equals("include_obfuscation") || v.isBoolean() && v.booleanValue()) {
                throw ApiError.unsupported("stream_options." + key, "Unsupported parameter 'stream_options." + key
                        + "': events are not padded against side channels here; send include_obfuscation: false.");
            }
        }
    }

}
