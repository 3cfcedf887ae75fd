package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.Sse;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code POST /v1/completions}: string and token-id prompts, default length, streamed shape. */
class TextCompletionsTest extends GatewayTestBase {

    private byte[] post(String body) {
        return web.post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(byte[].class).returnResult().getResponseBody();
    }

    @Test
    void aStringPromptIsEncodedWithoutTemplateAndDefaultsTo16Tokens() {
        JsonNode body = Sse.json(post("{\"model\":\"flotilla-sim\",\"prompt\":\"Once upon a time\"}"));
        assertThat(body.get("id").stringValue()).startsWith("cmpl-");
        assertThat(body.get("object").stringValue()).isEqualTo("text_completion");
        JsonNode choice = body.get("choices").get(0);
        assertThat(choice.get("text").stringValue()).isEqualTo(FakeCluster.expectedText(16));
        assertThat(choice.get("finish_reason").stringValue()).isEqualTo("length");
        assertThat(choice.get("logprobs").isNull()).isTrue();
        assertThat(cluster.workerA.generates.get(0).getTokenIdsList())
                .containsExactly(java.util.Arrays.stream(FakeCluster.TOKENIZER.encode("Once upon a time")).boxed().toArray(Integer[]::new));
        assertThat(body.get("usage").get("completion_tokens").intValue()).isEqualTo(16);
    }

    @Test
    void aTokenIdPromptReachesTheWorkerAsIs() {
        post("{\"prompt\":[1,2,3,100257,100276],\"max_tokens\":2}");
        assertThat(cluster.workerA.generates.get(0).getTokenIdsList()).containsExactly(1, 2, 3, 100257, 100276);
    }

    @Test
    void streamedTextCompletionChunks() {
        List<JsonNode> chunks = Sse.chunks(post("""
                {"prompt":"x","max_tokens":9,"stream":true,"stream_options":{"include_usage":true}}"""));
        StringBuilder text = new StringBuilder();
        for (JsonNode c : chunks.subList(0, chunks.size() - 1)) {
            assertThat(c.get("object").stringValue()).isEqualTo("text_completion");
            text.append(c.get("choices").get(0).get("text").stringValue());
        }
        assertThat(text.toString()).isEqualTo(FakeCluster.expectedText(9));
        assertThat(chunks.get(chunks.size() - 2).get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("length");
        assertThat(chunks.get(chunks.size() - 1).get("usage").get("completion_tokens").intValue()).isEqualTo(9);
    }
}
