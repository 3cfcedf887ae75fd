package io.flotilla.gateway.openai;

import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * Renders one request's responses in OpenAI's shapes: {@code chat.completion} /
 * {@code chat.completion.chunk} and {@code text_completion} (whole and streamed), usage, and the
 * error body. Every chunk of a stream carries the same {@code id}, {@code created} and {@code model}.
 */
public final class ResponseRenderer {

    private final JsonMapper json;
    private final CompletionKind kind;
    private final String id;
    private final long created;
    private final String model;
    private final boolean includeUsage;

    /**
     * @param id           response id, e.g. {@code chatcmpl-…}
     * @param created      Unix seconds
     * @param includeUsage streamed chunks carry {@code "usage": null} and a last chunk carries the usage
     */
    public ResponseRenderer(JsonMapper json, CompletionKind kind, String id, long created, String model,
                            boolean includeUsage) {
        this.json = json;
        this.kind = kind;
        this.id = id;
        this.created = created;
        this.model = model;
        this.includeUsage = includeUsage;
    }

    /** First chunk of a chat stream: the assistant role with empty content. */
    public String roleChunk() {
        ObjectNode delta = json.createObjectNode().put("role", "assistant").put("content", "");
        return chunk(delta, null, null);
    }

    public String deltaChunk(String text) {
        return kind == CompletionKind.CHAT
                ? chunk(json.createObjectNode().put("content", text), null, null)
                : chunk(null, text, null);
    }

    public String finishChunk(String finishReason) {
        return kind == CompletionKind.CHAT
                ? chunk(json.createObjectNode(), null, finishReason)
                : chunk(null, "", finishReason);
    }

    /** The {@code include_usage} chunk: empty choices and the usage. */
    public String usageChunk(TokenUsage usage) {
        ObjectNode root = header(kind.chunkObject());
        root.putArray("choices");
        root.set("usage", usage(usage));
        return json.writeValueAsString(root);
    }

    /** The non-streamed response. */
    public String completion(String text, String finishReason, TokenUsage usage) {
        ObjectNode root = header(kind.object());
        ObjectNode choice = root.putArray("choices").addObject().put("index", 0);
        if (kind == CompletionKind.CHAT) {
            choice.putObject("message").put("role", "assistant").put("content", text).putNull("refusal");
        } else {
            choice.put("text", text);
        }
        choice.putNull("logprobs").put("finish_reason", finishReason);
        root.set("usage", usage(usage));
        return json.writeValueAsString(root);
    }

    /** {@code {"error": {message, type, param, code}}}. */
    public static String errorBody(JsonMapper json, ApiError e) {
        ObjectNode root = json.createObjectNode();
        root.putObject("error")
                .put("message", e.getMessage())
                .put("type", e.type())
                .put("param", e.param())
                .put("code", e.code());
        return json.writeValueAsString(root);
    }

    private String chunk(ObjectNode delta, String text, String finishReason) {
        ObjectNode root = header(kind.chunkObject());
        ArrayNode choices = root.putArray("choices");
        ObjectNode choice = choices.addObject().put("index", 0);
        if (delta != null) {
            choice.set("delta", delta);
        } else {
            choice.put("text", text);
        }
        choice.putNull("logprobs");
        choice.put("finish_reason", finishReason);
        if (includeUsage) {
            root.putNull("usage");
        }
        return json.writeValueAsString(root);
    }

    private ObjectNode header(String object) {
        return json.createObjectNode()
                .put("id", id)
                .put("object", object)
                .put("created", created)
                .put("model", model);
    }

    private ObjectNode usage(TokenUsage u) {
        ObjectNode usage = json.createObjectNode()
                .put("prompt_tokens", u.promptTokens())
                .put("completion_tokens", u.completionTokens())
                .put("total_tokens", u.totalTokens());
        usage.putObject("prompt_tokens_details").put("cached_tokens", u.cachedTokens());
        return usage;
    }
}
