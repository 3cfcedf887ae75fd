package io.flotilla.bench.client;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;

/**
 * One parsed SSE payload of a streaming {@code /v1/completions} response.
 * <ul>
 *   <li>{@code data: [DONE]} → {@link Done}.</li>
 *   <li>An object with {@code error} (or an SSE {@code event: error}) → {@link Failure}.</li>
 *   <li>Otherwise a {@link Chunk}. It is a <em>content</em> chunk when its first choice has non-empty
 *       {@code text} or non-empty {@code token_ids}. A chunk may carry several tokens: {@code tokens}
 *       is the length of {@code token_ids} when present, else 1 for a content chunk (text alone does
 *       not say how many tokens it holds), else 0. {@code usage} is set on the chunk that carries it
 *       (with {@code stream_options.include_usage}, the last one, whose {@code choices} is empty).</li>
 * </ul>
 */
public sealed interface StreamEvent {

    ObjectMapper JSON = new ObjectMapper();

    record Done() implements StreamEvent {
    }

    record Failure(String message) implements StreamEvent {
    }

    record Chunk(boolean content, int tokens, int[] tokenIds, Usage usage) implements StreamEvent {
    }

    /** {@code usage.prompt_tokens}, {@code usage.prompt_tokens_details.cached_tokens} (0 when absent), {@code usage.completion_tokens}. */
    record Usage(int promptTokens, int cachedTokens, int completionTokens) {
    }

    /** Parses one event's data; malformed JSON is a {@link Failure}. */
    static StreamEvent parse(String type, String data) {
        String d = data.strip();
        if (d.equals("[DONE]")) {
            return new Done();
        }
        JsonNode n;
        try {
            n = JSON.readTree(d);
        } catch (IOException e) {
            return new Failure("unparseable SSE data: " + abbreviate(d));
        }
        if (n == null || !n.isObject()) {
            return new Failure("unexpected SSE data: " + abbreviate(d));
        }
        JsonNode error = n.get("error");
        if ((error != null && !error.isNull()) || "error".equals(type)) {
            return new Failure(errorMessage(error == null ? n : error));
        }
        boolean content = false;
        int tokens = 0;
        int[] ids = null;
        JsonNode choices = n.get("choices");
        if (choices != null && choices.isArray() && !choices.isEmpty()) {
            JsonNode c = choices.get(0);
            JsonNode tokenIds = c.get("token_ids");
            if (tokenIds != null && tokenIds.isArray() && !tokenIds.isEmpty()) {
                ids = new int[tokenIds.size()];
                for (int i = 0; i < ids.length; i++) {
                    ids[i] = tokenIds.get(i).asInt();
                }
                content = true;
                tokens = ids.length;
            } else {
                JsonNode text = c.get("text");
                if (text == null) {
                    JsonNode delta = c.get("delta");
                    text = delta == null ? null : delta.get("content");
                }
                if (text != null && text.isTextual() && !text.asText().isEmpty()) {
                    content = true;
                    tokens = 1;
                }
            }
        }
        return new Chunk(content, tokens, ids, usage(n.get("usage")));
    }

    private static Usage usage(JsonNode u) {
        if (u == null || !u.isObject()) {
            return null;
        }
        JsonNode details = u.get("prompt_tokens_details");
        int cached = details != null && details.isObject() ? details.path("cached_tokens").asInt(0) : 0;
        return new Usage(u.path("prompt_tokens").asInt(0), cached, u.path("completion_tokens").asInt(0));
    }

    private static String errorMessage(JsonNode error) {
        if (error.isTextual()) {
            return error.asText();
        }
        JsonNode message = error.get("message");
        String text = message != null && !message.isNull() ? message.asText() : error.toString();
        JsonNode code = error.get("code");
        return code != null && !code.isNull() ? text + " (code " + code.asText() + ")" : text;
    }

    private static String abbreviate(String s) {
        return s.length() <= 200 ? s : s.substring(0, 200) + "…";
    }
}
