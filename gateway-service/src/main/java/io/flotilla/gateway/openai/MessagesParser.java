package io.flotilla.gateway.openai;

import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Validates the {@code messages} of a chat completion request. */
final class MessagesParser {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant");
    /** Message fields accepted besides role/content/name, when they carry nothing (null or empty). */
    private static final Set<String> EMPTY_OK = Set.of("refusal", "tool_calls", "function_call", "audio", "annotations");

    private MessagesParser() {
    }

    static List<ChatMessage> parse(JsonParams body) {
        JsonNode messages = body.node("messages");
        if (messages == null) {
            throw ApiError.invalid("messages", "Missing required parameter: 'messages'.");
        }
        if (!messages.isArray()) {
            throw body.wrongType("messages", "an array", messages);
        }
        if (messages.isEmpty()) {
            throw ApiError.invalid("messages", "Invalid 'messages': empty array. Expected an array with minimum length 1.");
        }
        List<ChatMessage> out = new ArrayList<>(messages.size());
        for (int i = 0; i < messages.size(); i++) {
            out.add(message(messages.get(i), "messages[" + i + "]"));
        }
        return out;
    }

    private static ChatMessage message(JsonNode m, String path) {
        if (!m.isObject()) {
            throw ApiError.invalid(path, "Invalid type for '" + path + "': expected an object, but got "
                    + JsonParams.describe(m) + " instead.");
        }
        JsonParams p = new JsonParams(m, path + ".");
        for (String key : m.propertyNames()) {
            boolean known = key.equals("role") || key.equals("content") || key.equals("name");
            if (!known && !(EMPTY_OK.contains(key) && carriesNothing(m.get(key)))) {
                if (key.equals("tool_calls") || key.equals("function_call") || key.equals("tool_call_id")) {
                    throw ApiError.unsupported(p.path(key), "Unsupported parameter '" + p.path(key)
                            + "': tools (function calling) are not supported.");
                }
                throw ApiError.invalid(p.path(key), "Invalid '" + path + "': additional properties are not allowed ('"
                        + key + "' was unexpected).");
            }
        }
        String role = p.string("role");
        if (role == null) {
            throw ApiError.invalid(p.path("role"), "Missing required parameter: '" + p.path("role") + "'.");
        }
        if (role.equals("tool") || role.equals("function")) {
            throw ApiError.unsupported(p.path("role"), "Messages with role '" + role
                    + "' need tools (function calling), which this server does not support.");
        }
        if (!ROLES.contains(role)) {
            throw ApiError.invalid(p.path("role"), "Invalid value: '" + role
                    + "'. Supported values are: 'system', 'developer', 'user', and 'assistant'.");
        }
        String name = p.string("name");
        return new ChatMessage(role, name, content(p, path));
    }

    private static String content(JsonParams p, String path) {
        JsonNode c = p.node("content");
        if (c == null) {
            throw ApiError.invalid(p.path("content"), "Missing required parameter: '" + p.path("content") + "'.");
        }
        if (c.isString()) {
            return c.stringValue();
        }
        if (!c.isArray()) {
            throw p.wrongType("content", "a string or an array of content parts", c);
        }
        List<String> texts = new ArrayList<>(c.size());
        for (int j = 0; j < c.size(); j++) {
            String partPath = path + ".content[" + j + "]";
            JsonNode part = c.get(j);
            if (!part.isObject()) {
                throw ApiError.invalid(partPath, "Invalid type for '" + partPath + "': expected an object, but got "
                        + JsonParams.describe(part) + " instead.");
            }
            JsonParams pp = new JsonParams(part, partPath + ".");
            String type = pp.string("type");
            if (type == null) {
                throw ApiError.invalid(pp.path("type"), "Missing required parameter: '" + pp.path("type") + "'.");
            }
            if (!type.equals("text")) {
                throw ApiError.unsupported(pp.path("type"), "Unsupported content part type '" + type
                        + "': only 'text' parts are supported.");
            }
            String text = pp.string("text");
            if (text == null) {
                throw ApiError.invalid(pp.path("text"), "Missing required parameter: '" + pp.path("text") + "'.");
            }
            texts.add(text);
        }
        return String.join("\n", texts);
    }

    private static boolean carriesNothing(JsonNode n) {
        return n == null || n.isNull() || ((n.isArray() || n.isObject()) && n.isEmpty());
    }
}
