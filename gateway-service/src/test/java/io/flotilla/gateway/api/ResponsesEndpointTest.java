package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.fakes.Sse;
import io.flotilla.protocol.v1.RouteRequest;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code /v1/responses} through the gateway against the fake cluster (real gRPC): create (whole and streamed),
 * follow-ups with {@code previous_response_id} (the conversation rebuilt, the previous worker named to the router,
 * the placement counted), retrieve, delete, {@code input_items} pages, refusals by name, and two API keys that
 * never see each other's responses. {@code flotilla-sim} renders ChatML, parses hermes tool calls and qwen3
 * reasoning.
 */
@TestPropertySource(properties = "flotilla.gateway.auth.api-keys=resp-key-a,resp-key-b")
class ResponsesEndpointTest extends GatewayTestBase {

    private static final String KEY_A = "Bearer resp-key-a";
    private static final String KEY_B = "Bearer resp-key-b";
    private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"name\":\"get_weather\",\"parameters\":"
            + "{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}]";
    private static final String CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

    @Autowired
    MeterRegistry registry;

    private WebTestClient.ResponseSpec post(String key, String body) {
        return web.post().uri("/v1/responses").header(HttpHeaders.AUTHORIZATION, key)
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange();
    }

    private JsonNode create(String key, String body) {
        return Sse.json(post(key, body).expectStatus().isOk().expectBody(byte[].class).returnResult().getResponseBody());
    }

    private JsonNode get(String key, String uri, int status) {
        byte[] body = web.get().uri(uri).header(HttpHeaders.AUTHORIZATION, key).exchange()
                .expectStatus().isEqualTo(status).expectBody(byte[].class).returnResult().getResponseBody();
        return Sse.json(body);
    }

    private static String prompt(FakeWorker worker, int i) {
        return FakeCluster.decode(worker.generates.get(i).getTokenIdsList().stream().mapToInt(x -> x).toArray());
    }

    @Test
    void aStringInputGetsAResponseWithReasoningAndMessageItems() {
        cluster.workerA.reply("<think>\nThe user wants Paris.\n</think>\n\nIt is sunny.");
        JsonNode r = create(KEY_A, "{\"model\":\"flotilla-sim\",\"input\":\"Weather in Paris?\",\"instructions\":\"Be brief.\","
                + "\"max_output_tokens\":64,\"temperature\":0.25,\"metadata\":{\"ticket\":\"42\"}}");
        assertThat(r.at("/object").stringValue()).isEqualTo("response");
        assertThat(r.at("/id").stringValue()).startsWith("resp_");
        assertThat(r.at("/status").stringValue()).isEqualTo("completed");
        assertThat(r.at("/output/0/type").stringValue()).isEqualTo("reasoning");
        assertThat(r.at("/output/0/content/0/type").stringValue()).isEqualTo("reasoning_text");
        assertThat(r.at("/output/0/content/0/text").stringValue()).isEqualTo("\nThe user wants Paris.\n");
        assertThat(r.at("/output/1/type").stringValue()).isEqualTo("message");
        assertThat(r.at("/output/1/role").stringValue()).isEqualTo("assistant");
        assertThat(r.at("/output/1/content/0/type").stringValue()).isEqualTo("output_text");
        assertThat(r.at("/output/1/content/0/text").stringValue()).isEqualTo("It is sunny.");
        assertThat(r.at("/instructions").stringValue()).isEqualTo("Be brief.");
        assertThat(r.at("/max_output_tokens").intValue()).isEqualTo(64);
        assertThat(r.at("/temperature").doubleValue()).isEqualTo(0.25);
        assertThat(r.at("/top_p").isNull()).as("not sent, not invented").isTrue();
        assertThat(r.at("/metadata/ticket").stringValue()).isEqualTo("42");
        assertThat(r.at("/store").booleanValue()).isTrue();
        assertThat(r.at("/usage/output_tokens_details/reasoning_tokens").intValue()).isPositive();
        assertThat(r.at("/usage/input_tokens").intValue()).isEqualTo(
                cluster.workerA.generates.get(0).getTokenIdsCount());

        String prompt = prompt(cluster.workerA, 0);
        assertThat(prompt).startsWith("<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWeather in Paris?");
        assertThat(cluster.workerA.generates.get(0).getSampling().getTemperature()).isEqualTo(0.25);
        assertThat(cluster.workerA.generates.get(0).getStop().getMaxTokens()).isEqualTo(64);

        JsonNode again = get(KEY_A, "/v1/responses/" + r.at("/id").stringValue(), 200);
        assertThat(again).isEqualTo(r);
    }

    @Test
    void aFollowUpRebuildsTheConversationAndNamesThePreviousWorkerToTheRouter() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        cluster.workerA.reply("Paris is in France.");
        JsonNode first = create(KEY_A, "{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_text\",\"text\":"
                + "\"Where is Paris?\"}]}]}");
        double before = followups("same_worker");
        cluster.workerA.reply("About 2 million.");
        JsonNode second = create(KEY_A, "{\"previous_response_id\":\"" + first.at("/id").stringValue()
                + "\",\"input\":\"How many live there?\"}");
        assertThat(second.at("/previous_response_id").stringValue()).isEqualTo(first.at("/id").stringValue());
        assertThat(prompt(cluster.workerA, 1)).contains("<|im_start|>user\nWhere is Paris?<|im_end|>\n"
                + "<|im_start|>assistant\nParis is in France.<|im_end|>\n<|im_start|>user\nHow many live there?");
        assertThat(second.at("/usage/input_tokens_details/cached_tokens").intValue()).isEqualTo(16);

        List<RouteRequest> routes = cluster.router.routes;
        assertThat(routes.get(0).getHintsMap()).doesNotContainKey(ResponsesController.PREVIOUS_WORKER_HINT);
        assertThat(routes.get(1).getHintsMap()).containsEntry(ResponsesController.PREVIOUS_WORKER_HINT, "worker-a");
        assertThat(followups("same_worker")).isEqualTo(before + 1);

        JsonNode items = get(KEY_A, "/v1/responses/" + second.at("/id").stringValue() + "/input_items?order=asc", 200);
        assertThat(items.at("/object").stringValue()).isEqualTo("list");
        assertThat(items.at("/data").size()).isEqualTo(3);
        assertThat(items.at("/data/0/content/0/text").stringValue()).isEqualTo("Where is Paris?");
        assertThat(items.at("/data/1/content/0/text").stringValue()).isEqualTo("Paris is in France.");
        assertThat(items.at("/data/2/content/0/text").stringValue()).isEqualTo("How many live there?");
        assertThat(items.at("/has_more").booleanValue()).isFalse();

        JsonNode page = get(KEY_A, "/v1/responses/" + second.at("/id").stringValue() + "/input_items?limit=2", 200);
        assertThat(page.at("/data/0/content/0/text").stringValue()).as("desc by default").isEqualTo("How many live there?");
        assertThat(page.at("/has_more").booleanValue()).isTrue();
        JsonNode rest = get(KEY_A, "/v1/responses/" + second.at("/id").stringValue() + "/input_items?limit=2&after="
                + page.at("/last_id").stringValue(), 200);
        assertThat(rest.at("/data").size()).isEqualTo(1);
        assertThat(rest.at("/data/0/content/0/text").stringValue()).isEqualTo("Where is Paris?");
        assertThat(rest.at("/has_more").booleanValue()).isFalse();
    }

    @Test
    void aFollowUpThatTheRouterMovesIsCountedAsMoved() {
        cluster.workerA.reply("One.");
        JsonNode first = create(KEY_A, "{\"input\":\"Count.\"}");
        cluster.router.decide(r -> cluster.decisionFor(cluster.workerB).build());
        double before = followups("moved");
        cluster.workerB.reply("Two.");
        create(KEY_A, "{\"previous_response_id\":\"" + first.at("/id").stringValue() + "\",\"input\":\"Again.\"}");
        assertThat(followups("moved")).isEqualTo(before + 1);
    }

    @Test
    void aFunctionCallRoundTrip() {
        cluster.workerA.reply("Let me check.\n" + CALL);
        JsonNode call = create(KEY_A, "{\"input\":\"Weather in Paris?\"," + TOOLS + "}");
        assertThat(call.at("/output/0/type").stringValue()).isEqualTo("message");
        assertThat(call.at("/output/0/content/0/text").stringValue()).isEqualTo("Let me check.\n");
        JsonNode fc = call.at("/output/1");
        assertThat(fc.at("/type").stringValue()).isEqualTo("function_call");
        assertThat(fc.at("/name").stringValue()).isEqualTo("get_weather");
        assertThat(fc.at("/call_id").stringValue()).matches("call_[A-Za-z0-9]{24}");
        assertThat(Sse.json(fc.at("/arguments").stringValue()).at("/city").stringValue()).isEqualTo("Paris");
        assertThat(call.at("/tools/0/name").stringValue()).isEqualTo("get_weather");
        assertThat(call.at("/tool_choice").stringValue()).isEqualTo("auto");

        cluster.workerA.reply("It is sunny in Paris.");
        JsonNode answer = create(KEY_A, "{\"previous_response_id\":\"" + call.at("/id").stringValue() + "\"," + TOOLS
                + ",\"input\":[{\"type\":\"function_call_output\",\"call_id\":\"" + fc.at("/call_id").stringValue()
                + "\",\"output\":\"{\\\"sky\\\":\\\"sunny\\\"}\"}]}");
        assertThat(answer.at("/output/0/content/0/text").stringValue()).isEqualTo("It is sunny in Paris.");
        String prompt = prompt(cluster.workerA, 1);
        assertThat(prompt).contains("<|im_start|>assistant\nLet me check.\n\n<tool_call>\n{\"name\": \"get_weather\", "
                + "\"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>");
        assertThat(prompt).contains("<tool_response>\n{\"sky\":\"sunny\"}\n</tool_response>");
    }

    @Test
    void aStreamSendsTypedEventsInOrderAndEndsWithTheWholeResponse() {
        cluster.workerA.reply("<think>\nHm.\n</think>\n\nSure.\n" + CALL);
        byte[] raw = post(KEY_A, "{\"input\":\"Weather?\",\"stream\":true," + TOOLS + "}").expectStatus().isOk()
                .expectHeader().contentTypeCompatibleWith(MediaType.TEXT_EVENT_STREAM)
                .expectBody(byte[].class).returnResult().getResponseBody();
        List<String> names = new ArrayList<>();
        List<JsonNode> events = new ArrayList<>();
        for (String block : new String(raw, StandardCharsets.UTF_8).split("\n\n")) {
            if (block.isBlank()) {
                continue;
            }
            String[] lines = block.split("\n", 2);
            names.add(lines[0].substring("event: ".length()));
            events.add(Sse.json(lines[1].substring("data: ".length())));
        }
        for (int i = 0; i < events.size(); i++) {
            assertThat(events.get(i).at("/sequence_number").intValue()).isEqualTo(i);
            assertThat(events.get(i).at("/type").stringValue()).isEqualTo(names.get(i));
        }
        assertThat(names.subList(0, 4)).containsExactly("response.created", "response.in_progress",
                "response.output_item.added", "response.content_part.added");
        assertThat(names).containsSubsequence("response.reasoning_text.delta", "response.reasoning_text.done",
                "response.content_part.done", "response.output_item.done", "response.output_item.added",
                "response.content_part.added", "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.output_item.added",
                "response.function_call_arguments.delta", "response.function_call_arguments.done",
                "response.output_item.done", "response.completed");
        assertThat(names.get(names.size() - 1)).isEqualTo("response.completed");

        StringBuilder reasoning = new StringBuilder();
        StringBuilder text = new StringBuilder();
        StringBuilder arguments = new StringBuilder();
        for (JsonNode e : events) {
            switch (e.at("/type").stringValue()) {
                case "response.reasoning_text.delta" -> reasoning.append(e.at("/delta").stringValue());
                case "response.output_text.delta" -> text.append(e.at("/delta").stringValue());
                case "response.function_call_arguments.delta" -> arguments.append(e.at("/delta").stringValue());
                default -> { }
            }
        }
        JsonNode done = events.get(events.size() - 1).at("/response");
        assertThat(done.at("/output/0/content/0/text").stringValue()).isEqualTo(reasoning.toString()).isEqualTo("\nHm.\n");
        assertThat(done.at("/output/1/content/0/text").stringValue()).isEqualTo(text.toString()).isEqualTo("Sure.\n");
        assertThat(done.at("/output/2/arguments").stringValue()).isEqualTo(arguments.toString());
        assertThat(done.at("/usage/output_tokens").intValue()).isPositive();

        cluster.reset();
        cluster.workerA.reply("<think>\nHm.\n</think>\n\nSure.\n" + CALL);
        JsonNode whole = create(KEY_A, "{\"input\":\"Weather?\"," + TOOLS + "}");
        assertThat(stripIds(done.at("/output"))).isEqualTo(stripIds(whole.at("/output")));
        assertThat(get(KEY_A, "/v1/responses/" + done.at("/id").stringValue(), 200)).isEqualTo(done);
    }

    @Test
    void aResponseCutByMaxOutputTokensIsIncomplete() {
        JsonNode r = create(KEY_A, "{\"input\":\"Tell me a story.\",\"max_output_tokens\":3}");
        assertThat(r.at("/status").stringValue()).isEqualTo("incomplete");
        assertThat(r.at("/incomplete_details/reason").stringValue()).isEqualTo("max_output_tokens");
        assertThat(r.at("/output/0/status").stringValue()).isEqualTo("incomplete");
        assertThat(r.at("/usage/output_tokens").intValue()).isEqualTo(3);
    }

    @Test
    void anotherKeyNeverSeesAResponse() {
        JsonNode r = create(KEY_A, "{\"input\":\"Secret plans.\",\"max_output_tokens\":2}");
        String id = r.at("/id").stringValue();
        JsonNode error = get(KEY_B, "/v1/responses/" + id, 404);
        assertThat(error.at("/error/message").stringValue()).isEqualTo("Response with id '" + id + "' not found.");
        assertThat(error.at("/error/type").stringValue()).isEqualTo("invalid_request_error");
        get(KEY_B, "/v1/responses/" + id + "/input_items", 404);
        web.delete().uri("/v1/responses/" + id).header(HttpHeaders.AUTHORIZATION, KEY_B).exchange()
                .expectStatus().isNotFound();
        post(KEY_B, "{\"previous_response_id\":\"" + id + "\",\"input\":\"And?\"}").expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.param").isEqualTo("previous_response_id");
        assertThat(cluster.workerA.generates).hasSize(1);
        get(KEY_A, "/v1/responses/" + id, 200);
    }

    @Test
    void deleteForgetsAResponse() {
        JsonNode r = create(KEY_A, "{\"input\":\"Hello\",\"max_output_tokens\":2}");
        String id = r.at("/id").stringValue();
        web.delete().uri("/v1/responses/" + id).header(HttpHeaders.AUTHORIZATION, KEY_A).exchange()
                .expectStatus().isOk().expectBody()
                .jsonPath("$.id").isEqualTo(id).jsonPath("$.object").isEqualTo("response.deleted")
                .jsonPath("$.deleted").isEqualTo(true);
        get(KEY_A, "/v1/responses/" + id, 404);
        web.delete().uri("/v1/responses/" + id).header(HttpHeaders.AUTHORIZATION, KEY_A).exchange()
                .expectStatus().isNotFound();
    }

    @Test
    void storeFalseKeepsNothing() {
        JsonNode r = create(KEY_A, "{\"input\":\"Hello\",\"max_output_tokens\":2,\"store\":false}");
        assertThat(r.at("/store").booleanValue()).isFalse();
        get(KEY_A, "/v1/responses/" + r.at("/id").stringValue(), 404);
    }

    @Test
    void whatCannotBeHonouredIsRefusedByName() {
        String[][] cases = {
                {"\"background\":true", "background"},
                {"\"conversation\":\"conv_1\"", "conversation"},
                {"\"tools\":[{\"type\":\"web_search\"}]", "tools[0].type"},
                {"\"include\":[\"reasoning.encrypted_content\"]", "include"},
                {"\"reasoning\":{\"effort\":\"high\"}", "reasoning.effort"},
                {"\"truncation\":\"auto\"", "truncation"},
                {"\"prompt\":{\"id\":\"pmpt_1\"}", "prompt"},
                {"\"text\":{\"verbosity\":\"low\"}", "text.verbosity"},
                {"\"service_tier\":\"flex\"", "service_tier"},
        };
        for (String[] c : cases) {
            post(KEY_A, "{\"input\":\"hi\"," + c[0] + "}").expectStatus().isBadRequest().expectBody()
                    .jsonPath("$.error.param").isEqualTo(c[1])
                    .jsonPath("$.error.code").isEqualTo("unsupported_parameter")
                    .jsonPath("$.error.type").isEqualTo("invalid_request_error");
        }
        post(KEY_A, "{\"input\":[{\"role\":\"user\",\"content\":[{\"type\":\"input_image\",\"image_url\":\"x\"}]}]}")
                .expectStatus().isBadRequest().expectBody().jsonPath("$.error.param").isEqualTo("input[0].content[0].type");
        post(KEY_A, "{\"input\":\"hi\",\"frobnicate\":1}").expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("frobnicate");
        post(KEY_A, "{\"instructions\":\"x\"}").expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("input");
        post(KEY_A, "{\"input\":\"hi\",\"temperature\":3}").expectStatus().isBadRequest().expectBody()
                .jsonPath("$.error.param").isEqualTo("temperature");
        post(KEY_A, "{\"input\":\"hi\",\"previous_response_id\":\"resp_nope\"}").expectStatus().isNotFound()
                .expectBody().jsonPath("$.error.message").isEqualTo("Previous response with id 'resp_nope' not found.");
        get(KEY_A, "/v1/responses/resp_nope/input_items?limit=500", 400);
        get(KEY_A, "/v1/responses/resp_nope?stream=true", 400);
        assertThat(cluster.router.routes).isEmpty();
    }

    @Test
    void jsonSchemaFormatReachesTheEngine() {
        cluster.workerA.reply("{\"city\": \"Paris\"}");
        JsonNode r = create(KEY_A, "{\"input\":\"City?\",\"text\":{\"format\":{\"type\":\"json_schema\",\"name\":\"city\","
                + "\"schema\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}}");
        assertThat(r.at("/text/format/type").stringValue()).isEqualTo("json_schema");
        assertThat(cluster.workerA.generates.get(0).getSampling().getStructuredOutput().getJsonSchema()).contains("city");
    }

    private double followups(String outcome) {
        var c = registry.find("flotilla.gateway.responses.followups").tag("outcome", outcome).counter();
        return c == null ? 0 : c.count();
    }

    /** Output items without their ids (ids name the request, call ids are random; the rest must match exactly). */
    private static JsonNode stripIds(JsonNode output) {
        JsonNode copy = output.deepCopy();
        copy.forEach(item -> ((tools.jackson.databind.node.ObjectNode) item).remove(List.of("id", "call_id")));
        return copy;
    }
}
