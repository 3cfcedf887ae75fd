package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.Sse;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.RequestFields;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.SamplingParams;
import io.flotilla.protocol.v1.StructuredOutput;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * Every request field the gateway parses ({@link RequestFields}), sent with a value that is not its
 * default, arrives where the table says: in the engine's {@code SamplingParams}, {@code StopConditions}
 * or {@code n}, in the prompt, in the route, or in the response's shape. A field accepted only with its
 * "off" value is refused with another. The test fails when a field is added to the parser without a
 * case here, so no accepted field can be silently dropped.
 */
class RequestFieldsTest extends GatewayTestBase {

    private static final String MSGS = "\"messages\":[{\"role\":\"user\",\"content\":\"What is the weather?\"}]";
    private static final String TOOL = "{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
            + "\"description\":\"Current weather\",\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}}}";

    /** What one request with a field set looked like downstream. */
    record Seen(GenerateRequest generate, RouteRequest route, String prompt, byte[] body) {
    }

    interface Check {
        void check(Seen seen);
    }

    /** @param json the field and its value, e.g. {@code "top_k": 7}; null for an off-only field (checked apart) */
    private record Case(String json, Check check) {
    }

    private static Map<String, Case> common() {
        Map<String, Case> c = new LinkedHashMap<>();
        c.put("model", new Case("\"model\":\"tiny-model\"", s -> {
            assertThat(s.route().getModel()).isEqualTo("tiny-model");
            assertThat(s.generate().getModel()).isEqualTo("tiny-model");
        }));
        c.put("max_tokens", new Case("\"max_tokens\":3", s -> assertThat(s.generate().getStop().getMaxTokens()).isEqualTo(3)));
        c.put("stop", new Case("\"stop\":[\"brown\",\"x y\"]", s -> {
            assertThat(s.generate().getStop().getStopStringsList()).containsExactly("brown", "x y");
            assertThat(s.generate().getStop().getStopTokenIdsList()).as("a one-token stop string is a stop token too")
                    .contains(FakeCluster.TOKENIZER.encode("brown")[0]);
        }));
        c.put("stop_token_ids", new Case("\"stop_token_ids\":[11,12]", s ->
                assertThat(s.generate().getStop().getStopTokenIdsList()).containsExactly(11, 12)));
        c.put("ignore_eos", new Case("\"ignore_eos\":true", s -> assertThat(s.generate().getStop().getIgnoreEos()).isTrue()));
        c.put("temperature", new Case("\"temperature\":0.3", s -> assertThat(s.generate().getSampling().getTemperature()).isEqualTo(0.3)));
        c.put("top_p", new Case("\"top_p\":0.7", s -> assertThat(s.generate().getSampling().getTopP()).isEqualTo(0.7)));
        c.put("top_k", new Case("\"top_k\":7", s -> assertThat(s.generate().getSampling().getTopK()).isEqualTo(7)));
        c.put("min_p", new Case("\"min_p\":0.05", s -> assertThat(s.generate().getSampling().getMinP()).isEqualTo(0.05)));
        c.put("seed", new Case("\"seed\":99", s -> {
            assertThat(s.generate().getSampling().hasSeed()).isTrue();
            assertThat(s.generate().getSampling().getSeed()).isEqualTo(99L);
        }));
        c.put("presence_penalty", new Case("\"presence_penalty\":0.5", s ->
                assertThat(s.generate().getSampling().getPresencePenalty()).isEqualTo(0.5)));
        c.put("frequency_penalty", new Case("\"frequency_penalty\":-0.5", s ->
                assertThat(s.generate().getSampling().getFrequencyPenalty()).isEqualTo(-0.5)));
        c.put("repetition_penalty", new Case("\"repetition_penalty\":1.2", s ->
                assertThat(s.generate().getSampling().getRepetitionPenalty()).isEqualTo(1.2)));
        c.put("logit_bias", new Case("\"logit_bias\":{\"50256\":-100,\"17\":2.5}", s ->
                assertThat(s.generate().getSampling().getLogitBiasMap()).containsExactlyInAnyOrderEntriesOf(Map.of(50256, -100.0, 17, 2.5))));
        c.put("n", new Case("\"n\":3", s -> {
            assertThat(s.generate().getN()).isEqualTo(3);
            assertThat(Sse.json(s.body()).get("choices").size()).isEqualTo(3);
        }));
        c.put("stream", new Case("\"stream\":true", s -> assertThat(new String(s.body(), StandardCharsets.UTF_8)).startsWith("data: ")));
        c.put("stream_options", new Case("\"stream\":true,\"stream_options\":{\"include_usage\":true}", s -> {
            List<JsonNode> chunks = Sse.chunks(s.body());
            assertThat(chunks.get(chunks.size() - 1).get("usage").get("completion_tokens").intValue()).isPositive();
        }));
        c.put("user", new Case("\"user\":\"tenant-9\"", s -> {
            assertThat(s.route().getTenant()).isEqualTo("tenant-9");
            assertThat(s.generate().getTenant()).isEqualTo("tenant-9");
        }));
        return c;
    }

    private static Map<String, Case> chat() {
        Map<String, Case> c = common();
        c.put("messages", new Case(MSGS, s -> assertThat(s.prompt()).contains("<|im_start|>user\nWhat is the weather?<|im_end|>")));
        c.put("max_completion_tokens", new Case("\"max_completion_tokens\":4", s ->
                assertThat(s.generate().getStop().getMaxTokens()).isEqualTo(4)));
        c.put("logprobs", new Case("\"logprobs\":true", s -> {
            assertThat(s.generate().getSampling().getLogprobs()).isTrue();
            assertThat(Sse.json(s.body()).at("/choices/0/logprobs/content").size()).isPositive();
        }));
        c.put("top_logprobs", new Case("\"logprobs\":true,\"top_logprobs\":3", s ->
                assertThat(s.generate().getSampling().getTopLogprobs()).isEqualTo(3)));
        c.put("response_format", new Case("\"response_format\":{\"type\":\"json_schema\",\"json_schema\":{\"name\":\"w\","
                + "\"schema\":{\"type\":\"object\"}}}", s -> {
            StructuredOutput so = s.generate().getSampling().getStructuredOutput();
            assertThat(so.getJsonSchema()).isEqualTo("{\"type\":\"object\"}");
            assertThat(so.getSchemaName()).isEqualTo("w");
        }));
        c.put("tools", new Case("\"tools\":[" + TOOL + "]", s ->
                assertThat(s.prompt()).contains("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get_weather\"")));
        c.put("tool_choice", new Case("\"tools\":[" + TOOL + "],\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}",
                s -> assertThat(s.generate().getSampling().getStructuredOutput().getJsonSchema())
                        .as("the named function's parameters constrain the answer")
                        .isEqualTo("{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}}}")));
        c.put("parallel_tool_calls", new Case("\"tools\":[" + TOOL + "],\"tool_choice\":\"required\",\"parallel_tool_calls\":false",
                s -> assertThat(s.generate().getSampling().getStructuredOutput().getJsonSchema()).contains("\"maxItems\":1")));
        return c;
    }

    private static Map<String, Case> text() {
        Map<String, Case> c = common();
        c.put("prompt", new Case("\"prompt\":[5,6,7]", s -> assertThat(s.generate().getTokenIdsList()).containsExactly(5, 6, 7)));
        c.put("logprobs", new Case("\"logprobs\":2", s -> {
            assertThat(s.generate().getSampling().getLogprobs()).isTrue();
            assertThat(s.generate().getSampling().getTopLogprobs()).isEqualTo(2);
            assertThat(Sse.json(s.body()).at("/choices/0/logprobs/top_logprobs/0").size()).isEqualTo(2);
        }));
        return c;
    }

    /** A non-off value for each off-only field. */
    private static final Map<String, String> OFF_ONLY_ON = Map.ofEntries(
            Map.entry("functions", "[{\"name\":\"f\"}]"), Map.entry("function_call", "\"auto\""),
            Map.entry("modalities", "[\"text\",\"audio\"]"), Map.entry("audio", "{\"voice\":\"alloy\"}"),
            Map.entry("prediction", "{\"type\":\"content\",\"content\":\"x\"}"), Map.entry("reasoning_effort", "\"low\""),
            Map.entry("verbosity", "\"low\""), Map.entry("web_search_options", "{}"), Map.entry("store", "true"),
            Map.entry("metadata", "{\"a\":\"b\"}"), Map.entry("service_tier", "\"flex\""),
            Map.entry("prompt_cache_key", "\"k\""), Map.entry("safety_identifier", "\"s\""),
            Map.entry("echo", "true"), Map.entry("suffix", "\"end\""), Map.entry("best_of", "2"));

    private Seen send(CompletionKind kind, String field) {
        cluster.reset();
        boolean chat = kind == CompletionKind.CHAT;
        String base = chat ? MSGS : "\"prompt\":\"Once upon a time\"";
        String json = (chat ? chat() : text()).get(field).json();
        String body = "{" + (field.equals(chat ? "messages" : "prompt") ? "" : base + ",") + json
                + (json.contains("max_tokens") || json.contains("max_completion_tokens") ? "" : ",\"max_tokens\":5") + "}";
        byte[] response = web.post().uri(chat ? "/v1/chat/completions" : "/v1/completions")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(byte[].class).returnResult().getResponseBody();
        GenerateRequest g = cluster.workerA.generates.get(0);
        int[] ids = g.getTokenIdsList().stream().mapToInt(Integer::intValue).toArray();
        return new Seen(g, cluster.router.routesOf(g.getRequestId()).get(0), FakeCluster.decode(ids), response);
    }

    private void everyField(CompletionKind kind, Map<String, Case> cases) {
        Map<String, RequestFields.Destination> fields = RequestFields.of(kind);
        List<String> offOnly = new ArrayList<>();
        fields.forEach((name, to) -> {
            if (to == RequestFields.Destination.OFF_ONLY) {
                offOnly.add(name);
            }
        });
        assertThat(cases.keySet()).as("a case for every accepted field of %s", kind)
                .containsExactlyInAnyOrderElementsOf(fields.keySet().stream().filter(f -> !offOnly.contains(f)).toList());
        cases.forEach((field, c) -> assertThatCode(() -> c.check().check(send(kind, field)))
                .as("%s (to %s)", field, fields.get(field)).doesNotThrowAnyException());
        for (String field : offOnly) {
            String body = "{" + (kind == CompletionKind.CHAT ? MSGS : "\"prompt\":\"x\"") + ",\"" + field + "\":"
                    + OFF_ONLY_ON.get(field) + "}";
            web.post().uri(kind == CompletionKind.CHAT ? "/v1/chat/completions" : "/v1/completions")
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(body).exchange()
                    .expectStatus().isBadRequest()
                    .expectBody().jsonPath("$.error.param").isEqualTo(field);
        }
    }

    @Test
    void everyChatFieldArrivesWhereTheTableSays() {
        everyField(CompletionKind.CHAT, chat());
    }

    @Test
    void everyCompletionsFieldArrivesWhereTheTableSays() {
        everyField(CompletionKind.TEXT, text());
    }

    @Test
    void samplingFieldsTheClientLeftOutStayUnsetOnTheWayToTheEngine() {
        for (CompletionKind kind : CompletionKind.values()) {
            SamplingParams sampling = send(kind, kind == CompletionKind.CHAT ? "messages" : "prompt").generate().getSampling();
            assertThat(sampling.hasTemperature()).as("%s: temperature", kind).isFalse();
            assertThat(sampling.hasTopP()).as("%s: top_p", kind).isFalse();
            assertThat(sampling.hasTopK()).as("%s: top_k", kind).isFalse();
            assertThat(sampling.hasMinP()).as("%s: min_p", kind).isFalse();
            assertThat(sampling.hasPresencePenalty()).as("%s: presence_penalty", kind).isFalse();
            assertThat(sampling.hasFrequencyPenalty()).as("%s: frequency_penalty", kind).isFalse();
            assertThat(sampling.hasRepetitionPenalty()).as("%s: repetition_penalty", kind).isFalse();
            assertThat(sampling.hasSeed()).as("%s: seed", kind).isFalse();
            assertThat(sampling.getLogitBiasCount()).as("%s: logit_bias", kind).isZero();
        }
    }

    @Test
    void aValueAtItsNeutralSettingIsStillTheClientsAndArrives() {
        cluster.reset();
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{" + MSGS + ",\"max_tokens\":2,\"temperature\":1,\"top_p\":1,\"top_k\":-1,\"repetition_penalty\":1}")
                .exchange().expectStatus().isOk();
        SamplingParams sampling = cluster.workerA.generates.get(0).getSampling();
        assertThat(sampling.hasTemperature() && sampling.getTemperature() == 1).isTrue();
        assertThat(sampling.hasTopP() && sampling.getTopP() == 1).isTrue();
        assertThat(sampling.hasTopK() && sampling.getTopK() == -1).as("vLLM's 'all tokens', as sent").isTrue();
        assertThat(sampling.hasRepetitionPenalty() && sampling.getRepetitionPenalty() == 1).isTrue();
    }
}
