package io.flotilla.router.epp;

import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What the picker needs of an OpenAI request body: the model, the prompt in one of its three forms, the
 * tools a chat template renders and the output budget. Reads; never validates more than routing needs
 * (the model server answers a request it refuses). Chat content parts are joined with a newline, as the
 * gateway joins them, so a prompt tokenizes to the same ids on both paths.
 *
 * @param model     the {@code model} field
 * @param messages  chat messages ({@code /v1/chat/completions}); null for a text completion
 * @param tools     the tools the model may call (JSON objects as maps); empty for none
 * @param text      the prompt text of a text completion; null otherwise
 * @param tokenIds  the prompt as token ids of a text completion; null otherwise
 * @param maxTokens {@code max_completion_tokens} or {@code max_tokens}; null when absent
 */
public record OpenAiBody(String model, List<ChatMessage> messages, List<Map<String, Object>> tools, String text,
                         int[] tokenIds, Integer maxTokens) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** A body that is not an OpenAI request the picker can read; the message is the client's answer. */
    public static final class Unreadable extends RuntimeException {
        public Unreadable(String message) {
            super(message);
        }
    }

    public boolean chat() {
        return messages != null;
    }

    /** @throws Unreadable when the body is not a JSON object with a model and a prompt */
    public static OpenAiBody parse(byte[] body) {
        JsonNode root;
        try {
            root = JSON.readTree(new String(body, StandardCharsets.UTF_8));
        } catch (JacksonException e) {
            throw new Unreadable("the request body is not JSON: " + e.getOriginalMessage());
        }
        if (root == null || !root.isObject()) {
            throw new Unreadable("the request body is not a JSON object");
        }
        JsonNode model = root.get("model");
        if (model == null || !model.isString() || model.asString().isBlank()) {
            throw new Unreadable("'model' is required");
        }
        Integer maxTokens = intOrNull(root.get("max_completion_tokens"));
        if (maxTokens == null) {
            maxTokens = intOrNull(root.get("max_tokens"));
        }
        JsonNode messages = root.get("messages");
        if (messages != null) {
            if (!messages.isArray() || messages.isEmpty()) {
                throw new Unreadable("'messages' must be a non-empty array");
            }
            List<ChatMessage> out = new ArrayList<>();
            for (JsonNode m : messages) {
                out.add(message(m));
            }
            return new OpenAiBody(model.asString(), out, tools(root.get("tools")), null, null, maxTokens);
        }
        JsonNode prompt = root.get("prompt");
        if (prompt == null) {
            throw new Unreadable("'messages' or 'prompt' is required");
        }
        if (prompt.isString()) {
            return new OpenAiBody(model.asString(), null, List.of(), prompt.asString(), null, maxTokens);
        }
        if (prompt.isArray() && !prompt.isEmpty() && prompt.get(0).isIntegralNumber()) {
            int[] ids = new int[prompt.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = prompt.get(i).asInt();
            }
            return new OpenAiBody(model.asString(), null, List.of(), null, ids, maxTokens);
        }
        throw new Unreadable("'prompt' must be a string or an array of token ids");
    }

    private static ChatMessage message(JsonNode m) {
        if (!m.isObject() || m.get("role") == null) {
            throw new Unreadable("each message needs a 'role'");
        }
        String role = m.get("role").asString();
        String name = textOrNull(m.get("name"));
        String content = content(m.get("content"));
        List<ChatMessage.ToolCall> calls = new ArrayList<>();
        JsonNode toolCalls = m.get("tool_calls");
        if (toolCalls != null && toolCalls.isArray()) {
            for (JsonNode c : toolCalls) {
                JsonNode f = c.path("function");
                calls.add(new ChatMessage.ToolCall(textOrNull(c.get("id")), f.path("name").asString(""),
                        f.path("arguments").asString("")));
            }
        }
        if (content == null && calls.isEmpty()) {
            content = "";
        }
        return new ChatMessage(role, name, content, calls, textOrNull(m.get("tool_call_id")),
                textOrNull(m.get("reasoning_content")));
    }

    /** A string, or the text parts of an array joined with a newline (the gateway's rule); null when absent. */
    private static String content(JsonNode c) {
        if (c == null || c.isNull()) {
            return null;
        }
        if (c.isString()) {
            return c.asString();
        }
        if (c.isArray()) {
            List<String> parts = new ArrayList<>();
            for (JsonNode part : c) {
                if (part.isObject() && "text".equals(part.path("type").asString()) && part.get("text") != null) {
                    parts.add(part.get("text").asString());
                }
            }
            return String.join("\n", parts);
        }
        throw new Unreadable("a message's 'content' must be a string or an array of parts");
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> tools(JsonNode tools) {
        if (tools == null || !tools.isArray()) {
            return List.of();
        }
        List<Map<String, Object>> out = new ArrayList<>();
        for (JsonNode t : tools) {
            out.add(JSON.convertValue(t, Map.class));
        }
        return out;
    }

    private static Integer intOrNull(JsonNode n) {
        return n != null && n.isIntegralNumber() ? n.asInt() : null;
    }

    private static String textOrNull(JsonNode n) {
        return n == null || n.isNull() ? null : n.asString();
    }
}
