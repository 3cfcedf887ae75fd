package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A Messages conversation as chat messages. {@code user} content: text blocks (consecutive ones joined
 * with a newline, as the chat path joins text parts) and {@code tool_result} blocks, each its own
 * {@code tool} message, in block order. {@code assistant} content: text, {@code tool_use} (a tool call
 * whose arguments are the input as JSON) and {@code thinking} (the message's reasoning). A
 * {@code cache_control} marker is accepted: the engines cache every prompt prefix on their own. Images,
 * documents, server-tool blocks and {@code redacted_thinking} are 400s naming the block. The conversation
 * must end with a user turn: continuing an assistant message (a "prefill") would need the chat template
 * to leave that message open, which it does not.
 */
final class ContentBlocks {

    /** Prefixed to a {@code tool_result} with {@code is_error: true}: the chat template has no error flag. */
    static final String TOOL_ERROR_PREFIX = "Error: ";

    private ContentBlocks() {
    }

    /** One content block: its JSON and typed reads of it (paths like {@code messages.2.content.0.text}). */
    private record Block(JsonNode node, JsonParams p, String type) {

        String path(String field) {
            return p.path(field);
        }

        /** @throws ApiError when the block has a field not in {@code fields} */
        void only(String... fields) {
            Set<String> allowed = Set.of(fields);
            for (String key : node.propertyNames()) {
                if (!allowed.contains(key)) {
                    throw ApiError.invalid(p.path(key), p.path(key) + ": Extra inputs are not permitted");
                }
            }
        }

        String required(String field) {
            String v = p.string(field);
            if (v == null) {
                throw ApiError.invalid(p.path(field), p.path(field) + ": Field required");
            }
            return v;
        }
    }

    static void messages(JsonParams body, List<ChatMessage> out) {
        JsonNode messages = body.node("messages");
        if (messages == null) {
            throw ApiError.invalid("messages", "messages: Field required");
        }
        if (!messages.isArray()) {
            throw body.wrongType("messages", "an array", messages);
        }
        if (messages.isEmpty()) {
            throw ApiError.invalid("messages", "messages: at least one message is required");
        }
        for (int i = 0; i < messages.size(); i++) {
            String path = "messages." + i;
            JsonNode m = messages.get(i);
            if (!m.isObject()) {
                throw ApiError.invalid(path, path + ": expected an object, but got " + JsonParams.describe(m) + " instead.");
            }
            JsonParams p = new JsonParams(m, path + ".");
            for (String key : m.propertyNames()) {
                if (!key.equals("role") && !key.equals("content")) {
                    throw ApiError.invalid(p.path(key), p.path(key) + ": Extra inputs are not permitted");
                }
            }
            String role = p.string("role");
            if (role == null) {
                throw ApiError.invalid(p.path("role"), p.path("role") + ": Field required");
            }
            JsonNode content = p.node("content");
            if (content == null) {
                throw ApiError.invalid(p.path("content"), p.path("content") + ": Field required");
            }
            switch (role) {
                case "user" -> user(p, content, out);
                case "assistant" -> {
                    if (i == messages.size() - 1) {
                        throw ApiError.unsupported(path, path + ": a final assistant message (a prefill the answer "
                                + "continues) is not supported; end the conversation with a user message.");
                    }
                    out.add(assistant(p, content));
                }
                default -> throw ApiError.invalid(p.path("role"), p.path("role") + ": Input should be 'user' or 'assistant'");
            }
        }
    }

    private static void user(JsonParams p, JsonNode content, List<ChatMessage> out) {
        if (content.isString()) {
            out.add(new ChatMessage("user", null, content.stringValue()));
            return;
        }
        if (!content.isArray()) {
            throw p.wrongType("content", "a string or an array of content blocks", content);
        }
        List<String> texts = new ArrayList<>();
        for (int j = 0; j < content.size(); j++) {
            Block b = block(p.path("content." + j), content.get(j));
            if (b.type().equals("text")) {
                texts.add(text(b));
            } else if (b.type().equals("tool_result")) {
                flushUser(texts, out);
                out.add(toolResult(b));
            } else {
                throw unsupportedBlock(b);
            }
        }
        flushUser(texts, out);
    }

    private static void flushUser(List<String> texts, List<ChatMessage> out) {
        if (!texts.isEmpty()) {
            out.add(new ChatMessage("user", null, String.join("\n", texts)));
            texts.clear();
        }
    }

    private static ChatMessage assistant(JsonParams p, JsonNode content) {
        if (content.isString()) {
            return new ChatMessage("assistant", null, content.stringValue());
        }
        if (!content.isArray()) {
            throw p.wrongType("content", "a string or an array of content blocks", content);
        }
        List<String> texts = new ArrayList<>();
        List<String> thoughts = new ArrayList<>();
        List<ChatMessage.ToolCall> calls = new ArrayList<>();
        for (int j = 0; j < content.size(); j++) {
            Block b = block(p.path("content." + j), content.get(j));
            switch (b.type()) {
                case "text" -> texts.add(text(b));
                case "thinking" -> {
                    b.only("type", "thinking", "signature");
                    thoughts.add(b.required("thinking"));
                }
                case "tool_use" -> {
                    b.only("type", "id", "name", "input", "cache_control");
                    cacheControl(b.p());
                    JsonNode input = b.p().node("input");
                    if (input == null || !input.isObject()) {
                        throw ApiError.invalid(b.path("input"), b.path("input") + ": expected an object.");
                    }
                    calls.add(new ChatMessage.ToolCall(b.required("id"), b.required("name"), input.toString()));
                }
                default -> throw unsupportedBlock(b);
            }
        }
        String text = texts.isEmpty() && !calls.isEmpty() ? null : String.join("\n", texts);
        return new ChatMessage("assistant", null, text, calls, null, thoughts.isEmpty() ? null : String.join("\n", thoughts));
    }

    /** A {@code tool_result} as a tool message: its content a string or text blocks. */
    private static ChatMessage toolResult(Block b) {
        b.only("type", "tool_use_id", "content", "is_error", "cache_control");
        cacheControl(b.p());
        String id = b.required("tool_use_id");
        JsonNode content = b.p().node("content");
        String text = content == null ? "" : content.isString() ? content.stringValue() : texts(b.p(), "content", content);
        if (Boolean.TRUE.equals(b.p().bool("is_error"))) {
            text = TOOL_ERROR_PREFIX + text;
        }
        return new ChatMessage("tool", null, text, List.of(), id, null);
    }

    /** An array of text blocks (system, a tool result's content) as one text, joined with a newline. */
    static String texts(JsonParams parent, String field, JsonNode blocks) {
        if (!blocks.isArray()) {
            throw parent.wrongType(field, "a string or an array of text blocks", blocks);
        }
        List<String> texts = new ArrayList<>();
        for (int j = 0; j < blocks.size(); j++) {
            Block b = block(parent.path(field + "." + j), blocks.get(j));
            if (!b.type().equals("text")) {
                throw unsupportedBlock(b);
            }
            texts.add(text(b));
        }
        return String.join("\n", texts);
    }

    private static Block block(String path, JsonNode block) {
        if (!block.isObject()) {
            throw ApiError.invalid(path, path + ": expected an object, but got " + JsonParams.describe(block) + " instead.");
        }
        JsonParams p = new JsonParams(block, path + ".");
        String type = p.string("type");
        if (type == null) {
            throw ApiError.invalid(p.path("type"), p.path("type") + ": Field required");
        }
        return new Block(block, p, type);
    }

    private static String text(Block b) {
        b.only("type", "text", "cache_control", "citations");
        cacheControl(b.p());
        JsonNode citations = b.p().node("citations");
        if (citations != null && !(citations.isArray() && citations.isEmpty())) {
            throw ApiError.unsupported(b.path("citations"), b.path("citations") + ": citations are not supported.");
        }
        return b.required("text");
    }

    /** {@code cache_control: {"type": "ephemeral", "ttl": …}}: the engines' prefix caching is automatic. */
    static void cacheControl(JsonParams b) {
        JsonNode c = b.node("cache_control");
        if (c == null) {
            return;
        }
        if (!c.isObject() || !"ephemeral".equals(new JsonParams(c, b.path("cache_control.")).string("type"))) {
            throw ApiError.invalid(b.path("cache_control"), b.path("cache_control") + ": expected {\"type\": \"ephemeral\"}.");
        }
    }

    private static ApiError unsupportedBlock(Block b) {
        return ApiError.unsupported(b.path("type"), b.path("type") + ": content blocks of type '" + b.type() + "' are not "
                + "supported here (text, tool_use, tool_result and thinking are).");
    }
}
