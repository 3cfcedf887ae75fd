package io.flotilla.gateway.fakes;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Reads a raw {@code text/event-stream} body as the payloads of its {@code data: } lines. */
public final class Sse {

    public static final JsonMapper JSON = JsonMapper.builder().build();

    private Sse() {
    }

    /** Every event's payload, in order; asserts each event is exactly one {@code data: } line. */
    public static List<String> payloads(byte[] body) {
        String text = new String(body, StandardCharsets.UTF_8);
        assertThat(text).endsWith("\n\n");
        List<String> out = new ArrayList<>();
        for (String event : text.split("\n\n")) {
            assertThat(event).startsWith("data: ").doesNotContain("\n");
            out.add(event.substring("data: ".length()));
        }
        return out;
    }

    /** The JSON events (everything but the final {@code [DONE]}), asserting that it is there. */
    public static List<JsonNode> chunks(byte[] body) {
        List<String> payloads = payloads(body);
        assertThat(payloads).isNotEmpty();
        assertThat(payloads.get(payloads.size() - 1)).isEqualTo("[DONE]");
        return payloads.subList(0, payloads.size() - 1).stream().map(Sse::json).toList();
    }

    public static JsonNode json(String s) {
        return JSON.readTree(s);
    }

    public static JsonNode json(byte[] b) {
        return JSON.readTree(b);
    }
}
