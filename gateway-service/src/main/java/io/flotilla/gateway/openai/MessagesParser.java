package io.flotilla.gateway.openai;

import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Validates the {@code messages} of a chat completion request: roles {@code system}, {@code developer},
 * {@code user}, {@code assistant} (with optional {@code tool_calls} and {@code reasoning_content}) and
 * {@code tool} (with its {@code tool_call_id}).
 */
final class MessagesParser {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant", "tool");
    /** Message fields accepted besides the ones read, when they carry nothing (null or empty). */
    private static final Set<String> EMPTY_OK = Set.of("refusal", "function_call", "audio", "annotations");
    private static final Set<String> READ = Set.of("role", "content", "name", "tool_calls", "tool_call_id",
            "reasoning_content");
    /**
     * Fields the official SDKs' helpers echo back in assistant messages that repeat what the message
     * says already ({@code parsed}: the Node SDK's parse of the content); OpenAI takes them.
     */
    private static final Set<String> ECHOED = Set.of("parsed");
    private static final JsonMapper JSON = JsonMapper.builder().build();

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
            if (!READ.contains(key) && !ECHOED.contains(key) && !(EMPTY_OK.contains(key) && carriesNothing(m.get(key)))) {
                if (key.equals("function_call")) {
                    throw ApiError.unsupported(p.path(key), "Unsupported parameter '" + p.path(key)
                            + "': the deprecated functions API is not supported; use tool_calls.");
                }
                throw ApiError.invalid(p.path(key), "Invalid '" + path + "': additional properties are not allowed ('"
                        + key + "' was unexpected).");
            }
        }
        String role = p.string("role");
        if (role == null) {
            throw ApiError.invalid(p.path("role"), "Missing required parameter: '" + p.path("role") + "'.");
        }
        if (role.equals("function")) {
            throw ApiError.unsupported(p.path("role"), "Messages with role 'function' belong to the deprecated functions "
                    + "API, which this server does not support; use role 'tool'.");
        }
        if (!ROLES.contains(role)) {
            throw ApiError.invalid(p.path("role"), "Invalid value: '" + role
                    + "'. Supported values are: 'system', 'developer', 'user', 'assistant', and 'tool'.");
        }
        String name = p.string("name");
        boolean assistant = role.equals("assistant");
        List<ChatMessage.ToolCall> calls = assistant ? toolCalls(p, path) : List.of();
        for (String only : new String[] {"tool_calls", "reasoning_content"}) {
            if (!assistant && p.given(only)) {
                throw ApiError.invalid(p.path(only), "Invalid '" + p.path(only) + "': only assistant messages have it.");
            }
        }
        String toolCallId = p.string("tool_call_id");
        if (role.equals("tool") && toolCallId == null) {
            throw ApiError.invalid(p.path("tool_call_id"), "Missing required parameter: '" + p.path("tool_call_id") + "'.");
        }
        if (!role.equals("tool") && toolCallId != null) {
            throw ApiError.invalid(p.path("tool_call_id"), "Invalid '" + p.path("tool_call_id")
                    + "': only tool messages have it.");
        }
        String content = assistant && !calls.isEmpty() && p.node("content") == null ? null : content(p, path);
        return new ChatMessage(role, name, content, calls, toolCallId, assistant ? p.string("reasoning_content") : null);
    }

    /** An assistant message's {@code tool_calls}: {@code [{id, type: "function", function: {name, arguments}}]}. */
    private static List<ChatMessage.ToolCall> toolCalls(JsonParams p, String path) {
        JsonNode calls = p.node("tool_calls");
        if (calls == null) {
            return List.of();
        }
        if (!calls.isArray()) {
            throw p.wrongType("tool_calls", "an array", calls);
        }
        List<ChatMessage.ToolCall> out = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            String callPath = path + ".tool_calls[" + i + "]";
            JsonNode call = calls.get(i);
            if (!call.isObject()) {
                throw ApiError.invalid(callPath, "Invalid type for '" + callPath + "': expected an object.");
            }
            JsonParams c = new JsonParams(call, callPath + ".");
            String type = c.string("type");
            if (type != null && !type.equals("function")) {
                throw ApiError.unsupported(c.path("type"), "Unsupported tool call type '" + type + "'.");
            }
            JsonNode f = c.node("function");
            if (f == null || !f.isObject()) {
                throw ApiError.invalid(c.path("function"), "Missing required parameter: '" + c.path("function") + "'.");
            }
            JsonParams fp = new JsonParams(f, callPath + ".function.");
            String name = fp.string("name");
            if (name == null) {
                throw ApiError.invalid(fp.path("name"), "Missing required parameter: '" + fp.path("name") + "'.");
            }
            String arguments = fp.string("arguments");
            out.add(new ChatMessage.ToolCall(c.string("id"), name, arguments == null ? "{}" : asJson(arguments)));
        }
        return out;
    }

    /** The arguments as JSON text: as given when they are JSON, else as a JSON string of what was given. */
    private static String asJson(String arguments) {
        try {
            JSON.readTree(arguments);
            return arguments;
        } catch (JacksonException e) {
            return JSON.writeValueAsString(arguments);
        }
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
