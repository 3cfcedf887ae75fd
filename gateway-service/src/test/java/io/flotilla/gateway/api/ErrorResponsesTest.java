package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every client mistake is a 4xx with an OpenAI error body naming the parameter, never a 500, and
 * never reaches a worker. One case per row.
 */
class ErrorResponsesTest extends GatewayTestBase {

    private static final String CHAT = "/v1/chat/completions";
    private static final String TEXT = "/v1/completions";
    private static final String MSGS = "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]";

    private static Arguments chat(String name, String fields, String param) {
        return Arguments.of(name, CHAT, "{" + MSGS + (fields.isEmpty() ? "" : "," + fields) + "}", 400, param, null);
    }

    private static Arguments unsupported(String name, String path, String body, String param) {
        return Arguments.of(name, path, body, 400, param, "unsupported_parameter");
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("invalid JSON", CHAT, "{\"messages\": [", 400, null, null),
                Arguments.of("empty body", CHAT, "", 400, null, null),
                Arguments.of("body is not an object", CHAT, "[1,2]", 400, null, null),
                Arguments.of("missing messages", CHAT, "{\"model\":\"flotilla-sim\"}", 400, "messages", null),
                Arguments.of("empty messages", CHAT, "{\"messages\":[]}", 400, "messages", null),
                Arguments.of("messages not an array", CHAT, "{\"messages\":\"hi\"}", 400, "messages", null),
                Arguments.of("message not an object", CHAT, "{\"messages\":[\"hi\"]}", 400, "messages[0]", null),
                Arguments.of("missing role", CHAT, "{\"messages\":[{\"content\":\"hi\"}]}", 400, "messages[0].role", null),
                Arguments.of("unknown role", CHAT, "{\"messages\":[{\"role\":\"wizard\",\"content\":\"hi\"}]}", 400, "messages[0].role", null),
                Arguments.of("tool message without its call id", CHAT, "{\"messages\":[{\"role\":\"tool\",\"content\":\"hi\"}]}", 400, "messages[0].tool_call_id", null),
                Arguments.of("call id on a user message", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"tool_call_id\":\"x\"}]}", 400, "messages[0].tool_call_id", null),
                unsupported("function role", CHAT, "{\"messages\":[{\"role\":\"function\",\"content\":\"hi\",\"name\":\"f\"}]}", "messages[0].role"),
                Arguments.of("missing content", CHAT, "{\"messages\":[{\"role\":\"user\"}]}", 400, "messages[0].content", null),
                Arguments.of("content of a wrong type", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":5}]}", 400, "messages[0].content", null),
                unsupported("image content part", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"image_url\",\"image_url\":{\"url\":\"x\"}}]}]}", "messages[0].content[0].type"),
                Arguments.of("text part without text", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":[{\"type\":\"text\"}]}]}", 400, "messages[0].content[0].text", null),
                Arguments.of("assistant tool call without a function", CHAT, "{\"messages\":[{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"1\"}]}]}", 400, "messages[0].tool_calls[0].function", null),
                Arguments.of("tool calls on a user message", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"tool_calls\":[]}]}", 400, "messages[0].tool_calls", null),
                Arguments.of("unknown message field", CHAT, "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\",\"mood\":\"happy\"}]}", 400, "messages[0].mood", null),
                chat("temperature as a string", "\"temperature\":\"hot\"", "temperature"),
                chat("temperature above 2", "\"temperature\":2.5", "temperature"),
                chat("negative temperature", "\"temperature\":-0.1", "temperature"),
                chat("top_p of 0", "\"top_p\":0", "top_p"),
                chat("top_p above 1", "\"top_p\":1.5", "top_p"),
                chat("max_tokens of 0", "\"max_tokens\":0", "max_tokens"),
                chat("max_tokens decimal", "\"max_tokens\":5.5", "max_tokens"),
                chat("max_completion_tokens negative", "\"max_completion_tokens\":-3", "max_completion_tokens"),
                chat("seed decimal", "\"seed\":1.5", "seed"),
                chat("stream not a boolean", "\"stream\":\"yes\"", "stream"),
                chat("stream_options without stream", "\"stream_options\":{\"include_usage\":true}", "stream_options"),
                unsupported("unknown stream option", CHAT, "{" + MSGS + ",\"stream\":true,\"stream_options\":{\"continuous_usage_stats\":true}}", "stream_options.continuous_usage_stats"),
                chat("stop of a wrong type", "\"stop\":5", "stop"),
                chat("empty stop string", "\"stop\":[\"\"]", "stop"),
                chat("user not a string", "\"user\":42", "user"),
                chat("empty model", "\"model\":\"\"", "model"),
                chat("n of 0", "\"n\":0", "n"),
                chat("n above 128", "\"n\":129", "n"),
                chat("top_logprobs without logprobs", "\"top_logprobs\":2", "top_logprobs"),
                chat("top_logprobs above 20", "\"logprobs\":true,\"top_logprobs\":21", "top_logprobs"),
                chat("tools not an array", "\"tools\":{}", "tools"),
                unsupported("a tool that is not a function", CHAT, "{" + MSGS + ",\"tools\":[{\"type\":\"retrieval\"}]}", "tools[0].type"),
                chat("a function name with spaces", "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get weather\"}}]", "tools[0].function.name"),
                chat("a function named twice", "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}},{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]", "tools[1].function.name"),
                chat("tool_choice without tools", "\"tool_choice\":\"auto\"", "tool_choice"),
                chat("tool_choice naming another function", "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"g\"}}", "tool_choice"),
                chat("unknown tool_choice", "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"always\"", "tool_choice"),
                chat("forced calls and a response format", "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"required\",\"response_format\":{\"type\":\"json_object\"}", "response_format"),
                unsupported("functions", CHAT, "{" + MSGS + ",\"functions\":[{\"name\":\"f\"}]}", "functions"),
                chat("unknown response format", "\"response_format\":{\"type\":\"xml\"}", "response_format.type"),
                chat("json_schema without a name", "\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"schema\":{}}}", "response_format.json_schema.name"),
                chat("logit_bias above 100", "\"logit_bias\":{\"50256\":200}", "logit_bias"),
                chat("logit_bias key not a token id", "\"logit_bias\":{\"hello\":1}", "logit_bias"),
                chat("logit_bias outside the vocabulary", "\"logit_bias\":{\"100277\":1}", "logit_bias"),
                chat("presence_penalty above 2", "\"presence_penalty\":2.5", "presence_penalty"),
                chat("frequency_penalty below -2", "\"frequency_penalty\":-3", "frequency_penalty"),
                chat("repetition_penalty of 0", "\"repetition_penalty\":0", "repetition_penalty"),
                chat("top_k below -1", "\"top_k\":-2", "top_k"),
                chat("min_p above 1", "\"min_p\":1.5", "min_p"),
                chat("negative stop token id", "\"stop_token_ids\":[-1]", "stop_token_ids"),
                chat("stop token id outside the vocabulary", "\"stop_token_ids\":[100277]", "stop_token_ids"),
                Arguments.of("unknown parameter", CHAT, "{" + MSGS + ",\"temperatur\":1}", 400, "temperatur", null),
                Arguments.of("max_tokens over the context", CHAT, "{\"model\":\"tiny-model\"," + MSGS + ",\"max_tokens\":60}", 400, "max_tokens", "context_length_exceeded"),
                Arguments.of("prompt over the context", TEXT, "{\"model\":\"tiny-model\",\"prompt\":\"" + "word ".repeat(80) + "\"}", 400, "prompt", "context_length_exceeded"),
                Arguments.of("missing prompt", TEXT, "{\"max_tokens\":3}", 400, "prompt", null),
                Arguments.of("empty prompt", TEXT, "{\"prompt\":\"\"}", 400, "prompt", null),
                Arguments.of("empty token prompt", TEXT, "{\"prompt\":[]}", 400, "prompt", null),
                unsupported("batch of strings", TEXT, "{\"prompt\":[\"a\",\"b\"]}", "prompt"),
                unsupported("batch of token arrays", TEXT, "{\"prompt\":[[1,2],[3]]}", "prompt"),
                Arguments.of("negative token id", TEXT, "{\"prompt\":[1,-2]}", 400, "prompt", null),
                Arguments.of("token id outside the vocabulary", TEXT, "{\"prompt\":[1,100277]}", 400, "prompt", null),
                Arguments.of("prompt of a wrong type", TEXT, "{\"prompt\":{\"text\":\"x\"}}", 400, "prompt", null),
                unsupported("best_of > 1", TEXT, "{\"prompt\":\"x\",\"best_of\":2}", "best_of"),
                unsupported("echo", TEXT, "{\"prompt\":\"x\",\"echo\":true}", "echo"),
                unsupported("suffix", TEXT, "{\"prompt\":\"x\",\"suffix\":\"end\"}", "suffix"),
                unsupported("top_k on engines without it", CHAT, "{\"model\":\"plain-model\"," + MSGS + ",\"top_k\":5}", "top_k"),
                unsupported("top_p on engines without it", CHAT, "{\"model\":\"plain-model\"," + MSGS + ",\"top_p\":0.5}", "top_p"),
                unsupported("logprobs on engines without them", TEXT, "{\"model\":\"plain-model\",\"prompt\":\"x\",\"logprobs\":1}", "logprobs"),
                unsupported("json on engines without guided decoding", CHAT, "{\"model\":\"plain-model\"," + MSGS + ",\"response_format\":{\"type\":\"json_object\"}}", "response_format"),
                unsupported("forced calls on engines without guided decoding", CHAT, "{\"model\":\"plain-model\"," + MSGS + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}],\"tool_choice\":\"required\"}", "tool_choice"),
                unsupported("tools for a model without a tool parser", CHAT, "{\"model\":\"plain-model\"," + MSGS + ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]}", "tools"),
                Arguments.of("completion logprobs above 20", TEXT, "{\"prompt\":\"x\",\"logprobs\":21}", 400, "logprobs", null),
                Arguments.of("messages on /v1/completions", TEXT, "{" + MSGS + "}", 400, "messages", null),
                Arguments.of("unknown model", CHAT, "{\"model\":\"gpt-17\"," + MSGS + "}", 404, "model", "model_not_found"),
                Arguments.of("model without routable workers", TEXT, "{\"model\":\"ghost-model\",\"prompt\":\"x\"}", 404, "model", "model_not_found"),
                Arguments.of("body over the size limit", CHAT, "{" + MSGS + ",\"user\":\"" + "x".repeat(70_000) + "\"}", 413, null, "request_too_large"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void answersWithAnOpenAiError(String name, String path, String body, int status, String param, String code) {
        WebTestClient.BodyContentSpec error = web.post().uri(path).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange()
                .expectStatus().isEqualTo(status)
                .expectHeader().contentType(MediaType.APPLICATION_JSON)
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).isNotBlank());
        if (param == null) {
            error.jsonPath("$.error.param").isEmpty();
        } else {
            error.jsonPath("$.error.param").isEqualTo(param);
        }
        if (code != null) {
            error.jsonPath("$.error.code").isEqualTo(code);
        }
        assertThat(cluster.workerA.generates).as("a client mistake never reaches a worker").isEmpty();
        assertThat(cluster.router.routes).isEmpty();
    }

    @Test
    void harmlessDefaultsOfUnsupportedParametersAreAccepted() {
        web.post().uri(CHAT).contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{" + MSGS + ",\"n\":1,\"logprobs\":false,\"tools\":[],\"tool_choice\":\"none\",\"response_format\":{\"type\":\"text\"},"
                        + "\"logit_bias\":{},\"presence_penalty\":0,\"frequency_penalty\":0,\"max_tokens\":2,\"top_logprobs\":null}")
                .exchange().expectStatus().isOk();
    }

    @Test
    void unknownUrlIsAnOpenAi404() {
        web.post().uri("/v1/images/generations").contentType(MediaType.APPLICATION_JSON).bodyValue("{}")
                .exchange()
                .expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("/v1/images/generations"));
    }

    @Test
    void wrongMethodIsAnOpenAi405() {
        web.get().uri(CHAT).exchange()
                .expectStatus().isEqualTo(405)
                .expectBody().jsonPath("$.error.type").isEqualTo("invalid_request_error");
    }

    @Test
    void aDeclaredOversizedBodyIsRefusedBeforeReading() {
        byte[] big = new byte[200_000];
        java.util.Arrays.fill(big, (byte) ' ');
        web.post().uri(TEXT).contentType(MediaType.APPLICATION_JSON).contentLength(big.length).bodyValue(big)
                .exchange()
                .expectStatus().isEqualTo(413)
                .expectBody().jsonPath("$.error.code").isEqualTo("request_too_large");
    }

    @Test
    void aStreamedOversizedBodyIsCutOffAtTheLimit() {
        reactor.core.publisher.Flux<String> chunked = reactor.core.publisher.Flux.range(0, 100).map(i -> " ".repeat(1000));
        web.post().uri(TEXT).contentType(MediaType.APPLICATION_JSON).body(chunked, String.class)
                .exchange()
                .expectStatus().isEqualTo(413)
                .expectBody().jsonPath("$.error.code").isEqualTo("request_too_large");
    }
}
