package io.flotilla.gateway.sdk;

import com.anthropic.client.AnthropicClient;
import com.anthropic.client.okhttp.AnthropicOkHttpClient;
import com.anthropic.core.JsonValue;
import com.anthropic.core.http.StreamResponse;
import com.anthropic.errors.BadRequestException;
import com.anthropic.errors.NotFoundException;
import com.anthropic.helpers.MessageAccumulator;
import com.anthropic.models.ErrorType;
import com.anthropic.models.messages.ContentBlock;
import com.anthropic.models.messages.ContentBlockParam;
import com.anthropic.models.messages.Message;
import com.anthropic.models.messages.MessageCountTokensParams;
import com.anthropic.models.messages.MessageCreateParams;
import com.anthropic.models.messages.RawMessageStreamEvent;
import com.anthropic.models.messages.StopReason;
import com.anthropic.models.messages.Tool;
import com.anthropic.models.messages.ToolResultBlockParam;
import com.anthropic.models.messages.ToolUseBlock;
import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The official Anthropic Java SDK (response validation on) against {@code /v1/messages} of the gateway,
 * with the fake worker answering scripted text: {@code flotilla-sim} renders ChatML, reads calls with the
 * hermes parser and (in the tests' configuration) reasoning with the qwen3 parser.
 */
class AnthropicJavaClientTest extends GatewayTestBase {

    private static final String CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
    private static final Tool WEATHER = Tool.builder().name("get_weather").description("Weather of a city")
            .inputSchema(Tool.InputSchema.builder().properties(Tool.InputSchema.Properties.builder()
                    .putAdditionalProperty("city", JsonValue.from(Map.of("type", "string"))).build())
                    .required(List.of("city")).build())
            .build();

    private AnthropicClient client;

    @BeforeEach
    void client() {
        client = AnthropicOkHttpClient.builder()
                .baseUrl(baseUrl())
                .apiKey("unused-the-gateway-is-open")
                .maxRetries(0)
                .responseValidation(true)
                .build();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private static MessageCreateParams.Builder ask(long maxTokens, String text) {
        return MessageCreateParams.builder().model("flotilla-sim").maxTokens(maxTokens).addUserMessage(text);
    }

    private static String text(Message m) {
        StringBuilder out = new StringBuilder();
        m.content().forEach(b -> b.text().ifPresent(t -> out.append(t.text())));
        return out.toString();
    }

    @Test
    void aWholeMessage() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        Message m = client.messages().create(ask(6, "Hello there").system("Be brief.").putAdditionalBodyProperty("temperature", JsonValue.from(0.0)).build());
        assertThat(m.id()).startsWith("msg_");
        assertThat(m.model().asString()).isEqualTo("flotilla-sim");
        assertThat(m.content()).singleElement().satisfies(b -> assertThat(b.text().orElseThrow().text())
                .isEqualTo(FakeCluster.expectedText(6)));
        assertThat(m.stopReason()).contains(StopReason.MAX_TOKENS);
        assertThat(m.usage().outputTokens()).isEqualTo(6);
        assertThat(m.usage().cacheReadInputTokens()).contains(16L);
        int prompt = cluster.workerA.generates.get(0).getTokenIdsCount();
        assertThat(m.usage().inputTokens()).as("Anthropic counts cache reads apart").isEqualTo(prompt - 16);
        String rendered = FakeCluster.decode(cluster.workerA.generates.get(0).getTokenIdsList().stream().mapToInt(i -> i).toArray());
        assertThat(rendered).isEqualTo("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHello there<|im_end|>\n"
                + "<|im_start|>assistant\n");
        assertThat(cluster.workerA.generates.get(0).getSampling().getTemperature()).isZero();
    }

    @Test
    void aStreamedMessageAccumulatesToTheSameText() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        MessageAccumulator accumulator = MessageAccumulator.create();
        List<String> types = new ArrayList<>();
        try (StreamResponse<RawMessageStreamEvent> stream = client.messages().createStreaming(ask(25, "Hello").build())) {
            stream.stream().forEach(e -> {
                accumulator.accumulate(e);
                types.add(e.isMessageStart() ? "message_start" : e.isContentBlockStart() ? "content_block_start"
                        : e.isContentBlockDelta() ? "content_block_delta" : e.isContentBlockStop() ? "content_block_stop"
                        : e.isMessageDelta() ? "message_delta" : "message_stop");
            });
        }
        Message m = accumulator.message();
        assertThat(text(m)).isEqualTo(FakeCluster.expectedText(25));
        assertThat(m.stopReason()).contains(StopReason.MAX_TOKENS);
        assertThat(m.usage().outputTokens()).isEqualTo(25);
        assertThat(m.usage().cacheReadInputTokens()).as("the worker reports them at the end: message_delta").contains(16L);
        assertThat(types.get(0)).isEqualTo("message_start");
        assertThat(types.get(1)).isEqualTo("content_block_start");
        assertThat(types.subList(types.size() - 3, types.size()))
                .containsExactly("content_block_stop", "message_delta", "message_stop");
        assertThat(types).filteredOn("content_block_delta"::equals).hasSizeGreaterThan(1);
    }

    @Test
    void stopSequencesEndTheAnswerAndAreReported() {
        Message m = client.messages().create(ask(20, "Hi").stopSequences(List.of("brown", "lazy")).build());
        assertThat(text(m)).isEqualTo("The quick ");
        assertThat(m.stopReason()).contains(StopReason.STOP_SEQUENCE);
        assertThat(m.stopSequence()).contains("brown");
    }

    @Test
    void thinkingComesBackAsAThinkingBlockWholeAndStreamed() {
        cluster.workerA.reply("<think>Paris is in France.</think>It is Paris.");
        Message whole = client.messages().create(ask(40, "Capital?").build());
        assertThat(whole.content()).hasSize(2);
        assertThat(whole.content().get(0).thinking().orElseThrow().thinking()).isEqualTo("Paris is in France.");
        assertThat(whole.content().get(1).text().orElseThrow().text()).isEqualTo("It is Paris.");
        assertThat(whole.stopReason()).contains(StopReason.END_TURN);

        MessageAccumulator accumulator = MessageAccumulator.create();
        try (StreamResponse<RawMessageStreamEvent> stream = client.messages().createStreaming(ask(40, "Capital?").build())) {
            stream.stream().forEach(accumulator::accumulate);
        }
        Message streamed = accumulator.message();
        assertThat(streamed.content()).hasSize(2);
        assertThat(streamed.content().get(0).thinking().orElseThrow().thinking()).isEqualTo("Paris is in France.");
        assertThat(streamed.content().get(1).text().orElseThrow().text()).isEqualTo("It is Paris.");
    }

    @Test
    void aToolUseRoundTrip() {
        cluster.workerA.reply("Let me check.\n" + CALL);
        MessageCreateParams.Builder first = ask(60, "Weather in Paris?").addTool(WEATHER);
        Message call = client.messages().create(first.build());
        assertThat(call.stopReason()).contains(StopReason.TOOL_USE);
        assertThat(call.content().get(0).text().orElseThrow().text()).isEqualTo("Let me check.\n");
        ToolUseBlock use = call.content().get(1).toolUse().orElseThrow();
        assertThat(use.name()).isEqualTo("get_weather");
        assertThat(use._input().convert(Map.class)).isEqualTo(Map.of("city", "Paris"));

        cluster.workerA.reply("It is sunny in Paris.");
        Message answer = client.messages().create(first.addMessage(call)
                .addUserMessageOfContentBlockParams(List.of(ContentBlockParam.ofToolResult(ToolResultBlockParam.builder()
                        .toolUseId(use.id()).content("Sunny, 21 C").build())))
                .build());
        assertThat(text(answer)).isEqualTo("It is sunny in Paris.");
        assertThat(answer.stopReason()).contains(StopReason.END_TURN);
        String prompt = FakeCluster.decode(cluster.workerA.generates.get(1).getTokenIdsList().stream().mapToInt(i -> i).toArray());
        assertThat(prompt).contains("<|im_start|>assistant\nLet me check.\n")
                .contains("\"name\": \"get_weather\"", "Paris")
                .contains("<|im_start|>user\n<tool_response>\nSunny, 21 C\n</tool_response><|im_end|>")
                .endsWith("<|im_start|>assistant\n");
    }

    @Test
    void aStreamedToolUse() {
        cluster.workerA.reply(CALL);
        MessageAccumulator accumulator = MessageAccumulator.create();
        try (StreamResponse<RawMessageStreamEvent> stream = client.messages().createStreaming(ask(60, "Weather?")
                .addTool(WEATHER).build())) {
            stream.stream().forEach(accumulator::accumulate);
        }
        Message m = accumulator.message();
        assertThat(m.stopReason()).contains(StopReason.TOOL_USE);
        ContentBlock block = m.content().get(0);
        assertThat(block.toolUse().orElseThrow().name()).isEqualTo("get_weather");
        assertThat(block.toolUse().orElseThrow()._input().convert(Map.class)).isEqualTo(Map.of("city", "Paris"));
    }

    @Test
    void countTokensCountsThePromptMessagesWouldSend() {
        client.messages().create(ask(2, "Weather in Paris?").system("Be brief.").addTool(WEATHER).build());
        long counted = client.messages().countTokens(MessageCountTokensParams.builder().model("flotilla-sim")
                .system("Be brief.").addUserMessage("Weather in Paris?").addTool(WEATHER).build()).inputTokens();
        assertThat(counted).isEqualTo(cluster.workerA.generates.get(0).getTokenIdsCount()).isGreaterThan(50);
        assertThat(cluster.workerA.generates).hasSize(1);
    }

    @Test
    void errorsAreAnthropicErrors() {
        assertThatThrownBy(() -> client.messages().create(ask(5, "hi").putAdditionalBodyProperty("temperature", JsonValue.from(1.5)).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> {
                    assertThat(e.errorType()).contains(ErrorType.INVALID_REQUEST_ERROR);
                    assertThat(e.apiMessage().orElseThrow()).contains("temperature");
                });
        assertThatThrownBy(() -> client.messages().create(ask(5, "hi").model("no-such-model").build()))
                .isInstanceOfSatisfying(NotFoundException.class, e -> {
                    assertThat(e.errorType()).contains(ErrorType.NOT_FOUND_ERROR);
                    assertThat(e.apiMessage().orElseThrow()).contains("no-such-model");
                });
    }

    @Test
    void theWireShapes() {
        web.post().uri("/v1/messages").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"flotilla-sim\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isBadRequest()
                .expectBody().json("{\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\","
                        + "\"message\":\"max_tokens: Field required\"}}", true);
        web.post().uri("/v1/messages/batches").contentType(MediaType.APPLICATION_JSON).bodyValue("{}")
                .exchange().expectStatus().isNotFound()
                .expectBody().jsonPath("$.type").isEqualTo("error").jsonPath("$.error.type").isEqualTo("not_found_error");

        byte[] body = web.post().uri("/v1/messages").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"model\":\"flotilla-sim\",\"max_tokens\":3,\"stream\":true,"
                        + "\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                .exchange().expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectHeader().exists("x-request-id")
                .expectBody(byte[].class).returnResult().getResponseBody();
        List<String> names = new ArrayList<>();
        for (String event : new String(body, StandardCharsets.UTF_8).split("\n\n")) {
            String[] lines = event.split("\n");
            assertThat(lines).hasSize(2);
            assertThat(lines[0]).startsWith("event: ");
            assertThat(lines[1]).startsWith("data: {\"type\":\"" + lines[0].substring(7) + "\"");
            names.add(lines[0].substring(7));
        }
        assertThat(names).containsExactly("message_start", "ping", "content_block_start", "content_block_delta",
                "content_block_delta", "content_block_delta", "content_block_stop", "message_delta", "message_stop");
    }
}
