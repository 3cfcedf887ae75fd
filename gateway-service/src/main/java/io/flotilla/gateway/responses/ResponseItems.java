package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The items of a Responses conversation: validates a request's {@code input} into canonical items (each with an
 * {@code id}, as {@code input_items} lists them), and turns a whole conversation of items into the chat messages
 * the model's template renders. Kinds: {@code message} (roles {@code system}, {@code developer}, {@code user} with
 * {@code input_text} parts, {@code assistant} with {@code output_text} parts; content may be a string),
 * {@code function_call}, {@code function_call_output} and {@code reasoning} (its {@code reasoning_text}). Every
 * other item or content part (images, files, audio, hosted tools' calls, item references, encrypted reasoning) is
 * a 400 naming it. Stateless.
 */
public final class ResponseItems {

    private static final Set<String> ROLES = Set.of("system", "developer", "user", "assistant");

    private final JsonMapper json;

    public ResponseItems(JsonMapper json) {
        this.json = json;
    }

    /** {@code input}: a string (one user message) or an array of items, as canonical items with ids. */
    public ArrayNode input(JsonNode input, String idPrefix) {
        ArrayNode out = json.createArrayNode();
        if (input == null) {
            throw ApiError.invalid("input", "Missing required parameter: 'input'.");
        }
        if (input.isString()) {
            out.add(message(idPrefix + "_0", "user", "input_text", input.stringValue()));
            return out;
        }
        if (!input.isArray()) {
            throw ApiError.invalid("input", "Invalid type for 'input': expected a string or an array of items, but got "
                    + JsonParams.describe(input) + " instead.");
        }
        if (input.isEmpty()) {
            throw ApiError.invalid("input", "Invalid 'input': empty array. Expected at least one item.");
        }
        for (int i = 0; i < input.size(); i++) {
            out.add(item(input.get(i), "input[" + i + "]", idPrefix + "_" + i));
        }
        return out;
    }

    private ObjectNode item(JsonNode item, String path, String id) {
        if (!item.isObject()) {
            throw ApiError.invalid(path, "Invalid type for '" + path + "': expected an object, but got "
                    + JsonParams.describe(item) + " instead.");
        }
        JsonParams p = new JsonParams(item, path + ".");
        String type = p.string("type");
        if (type == null && p.given("role")) {
            type = "message";
        }
        String itemId = p.string("id") != null ? p.string("id") : id;
        return switch (type == null ? "" : type) {
            case "message" -> {
                allow(item, path, "type", "role", "content", "id", "status");
                String role = p.string("role");
                if (role == null || !ROLES.contains(role)) {
                    throw ApiError.invalid(p.path("role"), "Invalid value for '" + p.path("role") + "': expected one of "
                            + "'user', 'system', 'developer' or 'assistant'.");
                }
                String part = role.equals("assistant") ? "output_text" : "input_text";
                yield message(itemId, role, part, text(p, "content", role.equals("assistant")
                        ? Set.of("output_text", "refusal") : Set.of("input_text")));
            }
            case "function_call" -> {
                allow(item, path, "type", "call_id", "name", "arguments", "id", "status");
                ObjectNode o = json.createObjectNode().put("id", itemId).put("type", "function_call")
                        .put("status", "completed");
                o.put("call_id", required(p, "call_id")).put("name", required(p, "name"))
                        .put("arguments", required(p, "arguments"));
                yield o;
            }
            case "function_call_output" -> {
                allow(item, path, "type", "call_id", "output", "id", "status");
                ObjectNode o = json.createObjectNode().put("id", itemId).put("type", "function_call_output")
                        .put("status", "completed");
                o.put("call_id", required(p, "call_id")).put("output", text(p, "output", Set.of("input_text")));
                yield o;
            }
            case "reasoning" -> {
                allow(item, path, "type", "id", "summary", "content", "encrypted_content", "status");
                if (p.given("encrypted_content")) {
                    throw ApiError.unsupported(p.path("encrypted_content"), "Unsupported parameter '"
                            + p.path("encrypted_content") + "': this server neither makes nor reads encrypted reasoning.");
                }
                yield reasoning(itemId, reasoningText(p));
            }
            case "item_reference" -> throw ApiError.unsupported(p.path("type"), "Unsupported item type 'item_reference' in '"
                    + path + "': send the item itself, or continue a stored response with 'previous_response_id'.");
            case "" -> throw ApiError.invalid(p.path("type"), "Missing required parameter: '" + p.path("type") + "'.");
            default -> throw ApiError.unsupported(p.path("type"), "Unsupported item type '" + type + "' in '" + path
                    + "': only message, function_call, function_call_output and reasoning items are supported.");
        };
    }

    private static void allow(JsonNode item, String path, String... keys) {
        Set<String> allowed = Set.of(keys);
        for (String key : item.propertyNames()) {
            if (!allowed.contains(key)) {
                throw ApiError.invalid(path + "." + key, "Unrecognized item field supplied: '" + path + "." + key + "'.");
            }
        }
    }

    private static String required(JsonParams p, String name) {
        String v = p.string(name);
        if (v == null) {
            throw ApiError.invalid(p.path(name), "Missing required parameter: '" + p.path(name) + "'.");
        }
        return v;
    }

    /** A string, or an array of text parts of the given types (joined with a newline, as chat joins its parts). */
    private static String text(JsonParams p, String name, Set<String> partTypes) {
        JsonNode content = p.node(name);
        if (content == null) {
            throw ApiError.invalid(p.path(name), "Missing required parameter: '" + p.path(name) + "'.");
        }
        if (content.isString()) {
            return content.stringValue();
        }
        if (!content.isArray()) {
            throw p.wrongType(name, "a string or an array of content parts", content);
        }
        List<String> texts = new ArrayList<>();
        for (int j = 0; j < content.size(); j++) {
            String partPath = p.path(name) + "[" + j + "]";
            JsonNode part = content.get(j);
            if (!part.isObject()) {
                throw ApiError.invalid(partPath, "Invalid type for '" + partPath + "': expected an object.");
            }
            JsonParams pp = new JsonParams(part, partPath + ".");
            String type = pp.string("type");
            if (type == null || !partTypes.contains(type)) {
                throw ApiError.unsupported(pp.path("type"), "Unsupported content part type '" + type + "' in '" + partPath
                        + "': supported here: " + String.join(", ", partTypes.stream().sorted().toList()) + ".");
            }
            String text = pp.string(type.equals("refusal") ? "refusal" : "text");
            if (text == null) {
                throw ApiError.invalid(pp.path("text"), "Missing required parameter: '" + pp.path("text") + "'.");
            }
            texts.add(text);
        }
        return String.join("\n", texts);
    }

    /** A reasoning item's text: its {@code reasoning_text} parts (summaries are of no use to the template). */
    private static String reasoningText(JsonParams p) {
        JsonNode content = p.node("content");
        if (content == null) {
            return "";
        }
        return text(p, "content", Set.of("reasoning_text"));
    }

    ObjectNode message(String id, String role, String partType, String text) {
        ObjectNode o = json.createObjectNode().put("id", id).put("type", "message").put("status", "completed")
                .put("role", role);
        ObjectNode part = o.putArray("content").addObject().put("type", partType).put("text", text);
        if (partType.equals("output_text")) {
            part.putArray("annotations");
            part.putArray("logprobs");
        }
        return o;
    }

    ObjectNode reasoning(String id, String text) {
        ObjectNode o = json.createObjectNode().put("id", id).put("type", "reasoning");
        o.putArray("summary");
        o.putArray("content").addObject().put("type", "reasoning_text").put("text", text);
        o.put("status", "completed");
        return o;
    }

    /**
     * The chat messages of a conversation: {@code instructions} as a first system message, then the items in
     * order. Consecutive assistant output (reasoning, then text, then calls, as a model answers) is one assistant
     * message; each {@code function_call_output} a tool message answering its {@code call_id}.
     */
    public static List<ChatMessage> messages(String instructions, List<JsonNode> items) {
        List<ChatMessage> out = new ArrayList<>();
        if (instructions != null) {
            out.add(new ChatMessage("system", null, instructions));
        }
        Turn turn = new Turn();
        for (JsonNode item : items) {
            String type = item.path("type").asString("");
            switch (type) {
                case "reasoning" -> {
                    if (turn.reasoning != null || turn.content != null || !turn.calls.isEmpty()) {
                        turn.flush(out);
                    }
                    turn.reasoning = item.path("content").path(0).path("text").asString("");
                }
                case "function_call" -> turn.calls.add(new ChatMessage.ToolCall(item.path("call_id").asString(),
                        item.path("name").asString(), item.path("arguments").asString()));
                case "function_call_output" -> {
                    turn.flush(out);
                    out.add(new ChatMessage("tool", null, item.path("output").asString(""), List.of(),
                            item.path("call_id").asString(), null));
                }
                case "message" -> {
                    String role = item.path("role").asString();
                    String text = texts(item.path("content"));
                    if (role.equals("assistant")) {
                        if (turn.content != null || !turn.calls.isEmpty()) {
                            turn.flush(out);
                        }
                        turn.content = text;
                    } else {
                        turn.flush(out);
                        out.add(new ChatMessage(role, null, text));
                    }
                }
                default -> throw new IllegalStateException("a stored item of type '" + type + "'");
            }
        }
        turn.flush(out);
        return out;
    }

    private static String texts(JsonNode content) {
        List<String> texts = new ArrayList<>();
        content.forEach(part -> texts.add(part.has("refusal") ? part.path("refusal").asString("")
                : part.path("text").asString("")));
        return String.join("\n", texts);
    }

    /** The assistant turn being gathered from consecutive output items. */
    private static final class Turn {
        String reasoning;
        String content;
        final List<ChatMessage.ToolCall> calls = new ArrayList<>();

        void flush(List<ChatMessage> out) {
            if (reasoning == null && content == null && calls.isEmpty()) {
                return;
            }
            String text = content == null && calls.isEmpty() ? "" : content;
            out.add(new ChatMessage("assistant", null, text, calls, null, reasoning));
            reasoning = null;
            content = null;
            calls.clear();
        }
    }
}
