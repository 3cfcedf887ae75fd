package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.toolcall.ToolCalls;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * A whole (non-streamed) Messages response from the pipeline's one choice: content blocks in output
 * order (a {@code thinking} block from the reasoning parser, the answer's {@code text}, one {@code tool_use}
 * per parsed call with its arguments as the {@code input} object), {@code stop_reason},
 * {@code stop_sequence} and usage. Also the pieces the stream repeats: stop reason and usage.
 */
public final class MessageRenderer {

    private final JsonMapper json;
    private final String id;
    private final String model;

    /** @param id the message id, {@code msg_…} */
    public MessageRenderer(JsonMapper json, String id, String model) {
        this.json = json;
        this.id = id;
        this.model = model;
    }

    public String message(ChoiceResult choice, String stopSequence, TokenUsage usage) {
        ObjectNode root = header();
        ArrayNode content = root.putArray("content");
        if (choice.reasoning() != null) {
            content.addObject().put("type", "thinking").put("thinking", choice.reasoning()).put("signature", "");
        }
        if (choice.content() != null && !choice.content().isEmpty()) {
            content.addObject().put("type", "text").put("text", choice.content());
        }
        for (ToolCalls.Call call : choice.toolCalls()) {
            content.addObject().put("type", "tool_use").put("id", call.id()).put("name", call.name())
                    .set("input", input(call.arguments()));
        }
        root.put("stop_reason", stopReason(choice.finishReason(), !choice.toolCalls().isEmpty(), stopSequence));
        root.put("stop_sequence", stopSequence);
        root.set("usage", usage(usage));
        return json.writeValueAsString(root);
    }

    /** The message as {@code message_start} announces it: no content, no stop reason yet. */
    ObjectNode started(TokenUsage usage) {
        ObjectNode root = header();
        root.putArray("content");
        root.putNull("stop_reason");
        root.putNull("stop_sequence");
        root.set("usage", usage(usage));
        return root;
    }

    private ObjectNode header() {
        return json.createObjectNode().put("id", id).put("type", "message").put("role", "assistant").put("model", model);
    }

    /**
     * Anthropic's stop reason for the pipeline's finish reason: {@code max_tokens} when the output limit cut it,
     * {@code tool_use} when it called tools, {@code stop_sequence} when one of the client's sequences ended it,
     * else {@code end_turn}.
     */
    static String stopReason(String finishReason, boolean toolCalls, String stopSequence) {
        if ("length".equals(finishReason)) {
            return "max_tokens";
        }
        if (toolCalls || "tool_calls".equals(finishReason)) {
            return "tool_use";
        }
        return stopSequence != null ? "stop_sequence" : "end_turn";
    }

    /**
     * Anthropic counts cache reads apart from input: {@code input_tokens + cache_read_input_tokens} is the
     * prompt. Nothing is billed as written to a cache, so {@code cache_creation_input_tokens} is 0.
     */
    ObjectNode usage(TokenUsage u) {
        return json.createObjectNode()
                .put("input_tokens", u.promptTokens() - u.cachedTokens())
                .put("cache_creation_input_tokens", 0)
                .put("cache_read_input_tokens", u.cachedTokens())
                .put("output_tokens", u.completionTokens());
    }

    /** A call's arguments as the {@code input} object; the strict parse let only JSON through. */
    private JsonNode input(String arguments) {
        try {
            JsonNode n = json.readTree(arguments);
            return n.isObject() ? n : json.createObjectNode().set("value", n);
        } catch (JacksonException e) {
            throw new IllegalStateException("a parsed tool call's arguments are not JSON: " + arguments, e);
        }
    }
}
