package io.flotilla.gateway.sdk;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.core.JsonValue;
import com.openai.core.http.StreamResponse;
import com.openai.errors.BadRequestException;
import com.openai.errors.NotFoundException;
import com.openai.models.responses.FunctionTool;
import com.openai.models.responses.Response;
import com.openai.models.responses.ResponseCreateParams;
import com.openai.models.responses.ResponseFunctionToolCall;
import com.openai.models.responses.ResponseInputItem;
import com.openai.models.responses.ResponseOutputItem;
import com.openai.models.responses.ResponseStreamEvent;
import com.openai.models.responses.Tool;
import com.openai.models.responses.WebSearchTool;
import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The official OpenAI Java SDK's Responses API ({@code client.responses()}), strict response validation on,
 * against the gateway on a real socket and the fake workers: create, stream, a follow-up with
 * {@code previous_response_id}, a function-calling round trip, retrieve and delete.
 */
class OpenAiResponsesClientTest extends GatewayTestBase {

    private static final String CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

    private OpenAIClient client;

    @BeforeEach
    void client() {
        client = OpenAIOkHttpClient.builder()
                .baseUrl(baseUrl() + "/v1")
                .apiKey("unused-the-gateway-is-open")
                .maxRetries(0)
                .responseValidation(true)
                .build();
    }

    @AfterEach
    void close() {
        client.close();
    }

    private static String text(Response r) {
        StringBuilder out = new StringBuilder();
        for (ResponseOutputItem item : r.output()) {
            item.message().ifPresent(m -> m.content().forEach(c -> c.outputText().ifPresent(t -> out.append(t.text()))));
        }
        return out.toString();
    }

    @Test
    void createAndFollowUp() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        Response first = client.responses().create(ResponseCreateParams.builder()
                .model("flotilla-sim").input("Hello there").instructions("Be brief.").maxOutputTokens(6L).build());
        assertThat(first.id()).startsWith("resp_");
        assertThat(text(first)).isEqualTo(FakeCluster.expectedText(6));
        assertThat(first.status()).contains(com.openai.models.responses.ResponseStatus.INCOMPLETE);
        assertThat(first.usage().orElseThrow().outputTokens()).isEqualTo(6);
        assertThat(first.usage().orElseThrow().inputTokensDetails().cachedTokens()).isEqualTo(16);

        Response second = client.responses().create(ResponseCreateParams.builder()
                .model("flotilla-sim").input("And then?").previousResponseId(first.id()).maxOutputTokens(4L).build());
        assertThat(second.previousResponseId()).contains(first.id());
        String prompt = FakeCluster.decode(cluster.workerA.generates.get(1).getTokenIdsList().stream()
                .mapToInt(i -> i).toArray());
        assertThat(prompt).contains("Hello there").contains(FakeCluster.expectedText(6)).contains("And then?")
                .doesNotContain("Be brief.");

        Response retrieved = client.responses().retrieve(second.id());
        assertThat(retrieved.id()).isEqualTo(second.id());
        assertThat(text(retrieved)).isEqualTo(text(second));
        client.responses().delete(second.id());
        assertThatThrownBy(() -> client.responses().retrieve(second.id())).isInstanceOf(NotFoundException.class);
    }

    @Test
    void streaming() {
        StringBuilder deltas = new StringBuilder();
        List<ResponseStreamEvent> events = new ArrayList<>();
        try (StreamResponse<ResponseStreamEvent> stream = client.responses().createStreaming(ResponseCreateParams.builder()
                .model("flotilla-sim").input("Stream please").maxOutputTokens(20L).build())) {
            stream.stream().forEach(e -> {
                events.add(e);
                e.outputTextDelta().ifPresent(d -> deltas.append(d.delta()));
            });
        }
        assertThat(deltas.toString()).isEqualTo(FakeCluster.expectedText(20));
        assertThat(events.get(0).isCreated()).isTrue();
        Response done = events.get(events.size() - 1).incomplete().orElseThrow().response();
        assertThat(text(done)).isEqualTo(deltas.toString());
        assertThat(done.usage().orElseThrow().outputTokens()).isEqualTo(20);
    }

    @Test
    void functionCallingRoundTrip() {
        cluster.workerA.reply(CALL);
        FunctionTool weather = FunctionTool.builder().name("get_weather").strict(false)
                .parameters(FunctionTool.Parameters.builder()
                        .putAdditionalProperty("type", JsonValue.from("object"))
                        .putAdditionalProperty("properties", JsonValue.from(Map.of("city", Map.of("type", "string"))))
                        .build())
                .build();
        Response call = client.responses().create(ResponseCreateParams.builder()
                .model("flotilla-sim").input("Weather in Paris?").addTool(weather).build());
        ResponseFunctionToolCall fc = call.output().stream().flatMap(i -> i.functionCall().stream()).findFirst().orElseThrow();
        assertThat(fc.name()).isEqualTo("get_weather");
        assertThat(fc.arguments()).isEqualTo("{\"city\": \"Paris\"}");

        cluster.workerA.reply("Sunny, 21 degrees.");
        Response answer = client.responses().create(ResponseCreateParams.builder()
                .model("flotilla-sim").previousResponseId(call.id()).addTool(weather)
                .inputOfResponse(List.of(ResponseInputItem.ofFunctionCallOutput(ResponseInputItem.FunctionCallOutput.builder()
                        .callId(fc.callId()).output("{\"sky\": \"sunny\", \"celsius\": 21}").build())))
                .build());
        assertThat(text(answer)).isEqualTo("Sunny, 21 degrees.");
        String prompt = FakeCluster.decode(cluster.workerA.generates.get(1).getTokenIdsList().stream()
                .mapToInt(i -> i).toArray());
        assertThat(prompt).contains("<tool_response>\n{\"sky\": \"sunny\", \"celsius\": 21}\n</tool_response>");
    }

    @Test
    void hostedToolsAreRefusedByName() {
        assertThatThrownBy(() -> client.responses().create(ResponseCreateParams.builder()
                .model("flotilla-sim").input("Search").addTool(Tool.ofWebSearch(WebSearchTool.builder()
                        .type(WebSearchTool.Type.WEB_SEARCH).build())).build()))
                .isInstanceOfSatisfying(BadRequestException.class, e -> {
                    assertThat(e.param()).contains("tools[0].type");
                    assertThat(e.code()).contains("unsupported_parameter");
                });
    }
}
