package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.openai.LogprobsRequest;
import io.flotilla.gateway.openai.OutputFormat;
import io.flotilla.gateway.openai.SamplingParser;
import io.flotilla.gateway.openai.SamplingRequest;
import io.flotilla.gateway.openai.ToolsRequest;
import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Validates a {@code POST /v1/responses} body into a {@link ResponsesRequest} whose chat request is the one
 * {@code /v1/chat/completions} would build for the same conversation: {@code instructions} a first system
 * message, the items ({@link ResponseItems}) the messages, function tools the chat path's tools
 * ({@link ResponseTools}), {@code text.format} its {@code response_format} ({@link ResponseTextFormat}), {@code max_output_tokens} its output limit, {@code user} (or,
 * without it, {@code safety_identifier}) its tenant. Strict as the chat parser is: an unknown field is 400
 * "Unrecognized request argument supplied", and a field of a feature this server does not have ({@code background},
 * {@code conversation}, {@code prompt}, hosted tools, {@code include}, {@code reasoning.effort}, …) is 400
 * {@code unsupported_parameter} naming it, unless it is sent with its "off" value ({@link ResponseRefusals}).
 * Stateless.
 */
public final class ResponsesRequestParser {

    static final int MAX_METADATA = 16;

    /** Fields read here (the sampling fields as the chat path takes them, vLLM's included). */
    private static final Set<String> FIELDS = Set.of("model", "input", "instructions", "tools", "tool_choice",
            "parallel_tool_calls", "text", "reasoning", "max_output_tokens", "stream", "stream_options", "store",
            "previous_response_id", "metadata", "user", "safety_identifier", "truncation", "service_tier", "include",
            "background", "conversation", "prompt", "prompt_cache_key", "max_tool_calls", "top_logprobs",
            "temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty",
            "logit_bias", "seed", "ignore_eos", "stop_token_ids");

    private final JsonMapper json;
    private final ResponseItems items;

    public ResponsesRequestParser(JsonMapper json) {
        this.json = json;
        this.items = new ResponseItems(json);
    }

    /** {@code previous_response_id} alone, checked: read before the rest, to look the stored response up. */
    public static String previousResponseId(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        String id = new JsonParams(body, "").string("previous_response_id");
        if (id != null && id.isBlank()) {
            throw ApiError.invalid("previous_response_id", "Invalid 'previous_response_id': must not be empty.");
        }
        return id;
    }

    /**
     * @param requestId this response's request id (input item ids derive from it)
     * @param previous  the stored response named by {@code previous_response_id}, visible to the caller; null
     *                  when none was named
     */
    public ResponsesRequest parse(JsonNode body, String requestId, StoredResponse previous) {
        previousResponseId(body);
        for (String key : body.propertyNames()) {
            if (!FIELDS.contains(key)) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        JsonParams p = new JsonParams(body, "");
        ResponseRefusals.refuseUnsupported(p);
        String model = p.string("model");
        if (model != null && model.isBlank()) {
            throw ApiError.invalid("model", "Invalid 'model': must not be empty.");
        }
        String instructions = p.string("instructions");
        Long maxOutput = p.integer("max_output_tokens", 1, Integer.MAX_VALUE);
        SamplingRequest sampling = SamplingParser.parse(p);
        boolean stream = Boolean.TRUE.equals(p.bool("stream"));
        ResponseRefusals.streamOptions(p, stream);
        boolean store = !Boolean.FALSE.equals(p.bool("store"));
        String user = p.string("user");
        String safetyIdentifier = p.string("safety_identifier");
        ObjectNode metadata = metadata(p);
        ToolsRequest tools = ResponseTools.parse(p);
        OutputFormat format = ResponseTextFormat.parse(p);
        if (tools.forced() && format.kind() != OutputFormat.Kind.TEXT) {
            throw ApiError.invalid("text.format", "Invalid 'text.format': it cannot be combined with a tool_choice that "
                    + "forces a call, which constrains the answer itself.");
        }

        ArrayNode input = items.input(p.node("input"), "in_" + requestId);
        List<JsonNode> conversation = new ArrayList<>();
        if (previous != null) {
            json.readTree(previous.inputItems()).forEach(conversation::add);
            json.readTree(previous.response()).path("output").forEach(conversation::add);
        }
        input.forEach(conversation::add);
        List<ChatMessage> messages = ResponseItems.messages(instructions, conversation);
        String tenant = user != null && !user.isBlank() ? user : safetyIdentifier;
        CompletionRequest completion = new CompletionRequest(CompletionKind.CHAT, model, messages, null, null,
                maxOutput == null ? null : maxOutput.intValue(), List.of(), sampling, 1, tenant, stream, false, tools,
                format, LogprobsRequest.OFF);

        ObjectNode echo = json.createObjectNode();
        echo.put("instructions", instructions);
        echo.put("max_output_tokens", maxOutput);
        echo.set("metadata", metadata);
        echo.put("parallel_tool_calls", tools.parallel());
        echo.put("previous_response_id", previous == null ? null : previous.id());
        echo.putObject("reasoning").putNull("effort").putNull("summary");
        echo.put("store", store);
        echo.put("temperature", sampling.temperature());
        echo.put("top_p", sampling.topP());
        ObjectNode text = echo.putObject("text");
        text.set("format", p.node("text") != null && p.node("text").has("format") ? p.node("text").get("format")
                : json.createObjectNode().put("type", "text"));
        echo.set("tool_choice", p.node("tool_choice") != null ? p.node("tool_choice")
                : json.getNodeFactory().stringNode(tools.tools().isEmpty() ? "none" : "auto"));
        echo.set("tools", p.node("tools") != null ? p.node("tools") : json.createArrayNode());
        echo.put("truncation", "disabled");
        echo.put("user", user);
        echo.put("safety_identifier", safetyIdentifier);
        echo.put("service_tier", "default");
        return new ResponsesRequest(completion, copy(input), conversation, echo, store,
                previous);
    }

    private static List<JsonNode> copy(ArrayNode array) {
        List<JsonNode> out = new ArrayList<>(array.size());
        array.forEach(out::add);
        return out;
    }

    /** Up to 16 string pairs (keys up to 64 characters, values up to 512), returned as sent. */
    private ObjectNode metadata(JsonParams p) {
        JsonNode metadata = p.node("metadata");
        ObjectNode out = json.createObjectNode();
        if (metadata == null) {
            return out;
        }
        if (!metadata.isObject()) {
            throw p.wrongType("metadata", "an object", metadata);
        }
        if (metadata.size() > MAX_METADATA) {
            throw ApiError.invalid("metadata", "Invalid 'metadata': at most " + MAX_METADATA + " pairs are allowed.");
        }
        for (Map.Entry<String, JsonNode> e : metadata.properties()) {
            if (e.getKey().length() > 64 || !e.getValue().isString() || e.getValue().stringValue().length() > 512) {
                throw ApiError.invalid("metadata", "Invalid 'metadata." + e.getKey() + "': keys are strings of at most "
                        + "64 characters, values strings of at most 512.");
            }
            out.put(e.getKey(), e.getValue().stringValue());
        }
        return out;
    }

}
