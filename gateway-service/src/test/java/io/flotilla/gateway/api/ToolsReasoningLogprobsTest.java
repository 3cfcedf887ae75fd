package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.Sse;
import io.flotilla.protocol.v1.GenerateRequest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tool calls, reasoning, log-probabilities and n through the gateway, with the fake worker answering a
 * scripted reply token by token (so markers and JSON arrive split across tokens, as from a model).
 * {@code flotilla-sim} renders with ChatML and reads calls with the hermes parser; the tests'
 * configuration gives it the qwen3 reasoning parser.
 */
class ToolsReasoningLogprobsTest extends GatewayTestBase {

    private static final String TOOLS = "\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"get_weather\","
            + "\"parameters\":{\"type\":\"object\",\"properties\":{\"city\":{\"type\":\"string\"}},\"required\":[\"city\"]}}}]";
    private static final String ASK = "\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"}]";
    private static final String CALL = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";

    private byte[] chat(String fields) {
        return web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue("{" + fields + "}")
                .exchange().expectStatus().isOk().expectBody(byte[].class).returnResult().getResponseBody();
    }

    @Test
    void aToolCallIsReturnedAsToolCallsWithFinishReasonToolCalls() {
        cluster.workerA.reply("I will look it up.\n" + CALL);
        JsonNode body = Sse.json(chat(ASK + "," + TOOLS));
        JsonNode choice = body.at("/choices/0");
        assertThat(choice.at("/message/content").stringValue()).isEqualTo("I will look it up.\n");
        JsonNode call = choice.at("/message/tool_calls/0");
        assertThat(call.at("/id").stringValue()).matches("call_[A-Za-z0-9]{24}");
        assertThat(call.at("/type").stringValue()).isEqualTo("function");
        assertThat(call.at("/function/name").stringValue()).isEqualTo("get_weather");
        assertThat(Sse.json(call.at("/function/arguments").stringValue()).at("/city").stringValue()).isEqualTo("Paris");
        assertThat(choice.at("/finish_reason").stringValue()).isEqualTo("tool_calls");

        String prompt = FakeCluster.decode(cluster.workerA.generates.get(0).getTokenIdsList().stream().mapToInt(i -> i).toArray());
        assertThat(prompt).startsWith("<|im_start|>system\n# Tools\n").contains("\"name\": \"get_weather\"")
                .endsWith("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void streamedToolCallsArriveAsOpenAiDeltas() {
        cluster.workerA.reply(CALL);
        List<JsonNode> chunks = Sse.chunks(chat(ASK + "," + TOOLS + ",\"stream\":true"));
        assertThat(chunks.get(0).at("/choices/0/delta/role").stringValue()).isEqualTo("assistant");
        List<JsonNode> deltas = new ArrayList<>();
        for (JsonNode c : chunks) {
            JsonNode calls = c.at("/choices/0/delta/tool_calls");
            calls.forEach(deltas::add);
            assertThat(c.at("/choices/0/delta/content").asString("")).as("no content: the reply is one call").isEmpty();
        }
        assertThat(deltas.get(0).get("index").intValue()).isZero();
        assertThat(deltas.get(0).get("id").stringValue()).startsWith("call_");
        assertThat(deltas.get(0).at("/function/name").stringValue()).isEqualTo("get_weather");
        assertThat(deltas.get(0).at("/function/arguments").stringValue()).isEmpty();
        assertThat(deltas.size()).as("the arguments come in several fragments").isGreaterThan(2);
        StringBuilder arguments = new StringBuilder();
        for (JsonNode d : deltas.subList(1, deltas.size())) {
            assertThat(d.has("id")).isFalse();
            assertThat(d.get("index").intValue()).isZero();
            arguments.append(d.at("/function/arguments").stringValue());
        }
        assertThat(Sse.json(arguments.toString()).at("/city").stringValue()).isEqualTo("Paris");
        assertThat(chunks.get(chunks.size() - 1).at("/choices/0/finish_reason").stringValue()).isEqualTo("tool_calls");
    }

    @Test
    void malformedCallsArePlainContent() {
        String broken = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": }\n</tool_call>";
        cluster.workerA.reply(broken);
        JsonNode choice = Sse.json(chat(ASK + "," + TOOLS)).at("/choices/0");
        assertThat(choice.at("/message/content").stringValue()).isEqualTo(broken);
        assertThat(choice.at("/message/tool_calls").isMissingNode()).isTrue();
        assertThat(choice.at("/finish_reason").stringValue()).isEqualTo("stop");
    }

    @Test
    void historyWithCallsAndToolResultsRendersBackThroughTheTemplate() {
        cluster.workerA.reply("Sunny.");
        chat("\"messages\":[{\"role\":\"user\",\"content\":\"Weather in Paris?\"},"
                + "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":\"call_1\",\"type\":\"function\","
                + "\"function\":{\"name\":\"get_weather\",\"arguments\":\"{\\\"city\\\": \\\"Paris\\\"}\"}}]},"
                + "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"{\\\"sky\\\": \\\"clear\\\"}\"}]," + TOOLS);
        GenerateRequest sent = cluster.workerA.generates.get(0);
        String prompt = FakeCluster.decode(sent.getTokenIdsList().stream().mapToInt(i -> i).toArray());
        assertThat(prompt).contains("<|im_start|>assistant\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": "
                + "{\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n<|im_start|>user\n<tool_response>\n{\"sky\": \"clear\"}\n"
                + "</tool_response><|im_end|>\n<|im_start|>assistant\n");
    }

    @Test
    void forcedCallsAskForConstrainedJsonAndReadIt() {
        cluster.workerA.reply("{\"city\": \"Paris\"}");
        JsonNode body = Sse.json(chat(ASK + "," + TOOLS
                + ",\"tool_choice\":{\"type\":\"function\",\"function\":{\"name\":\"get_weather\"}}"));
        assertThat(cluster.workerA.generates.get(0).getSampling().getStructuredOutput().getJsonSchema()).contains("\"city\"");
        assertThat(body.at("/choices/0/message/tool_calls/0/function/name").stringValue()).isEqualTo("get_weather");
        assertThat(body.at("/choices/0/message/tool_calls/0/function/arguments").stringValue()).isEqualTo("{\"city\": \"Paris\"}");
        assertThat(body.at("/choices/0/finish_reason").stringValue()).as("as OpenAI answers a named tool_choice").isEqualTo("stop");

        cluster.reset();
        cluster.workerA.reply("[{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Rome\"}}]");
        JsonNode required = Sse.json(chat(ASK + "," + TOOLS + ",\"tool_choice\":\"required\""));
        assertThat(required.at("/choices/0/message/tool_calls/0/function/arguments").stringValue()).isEqualTo("{\"city\": \"Rome\"}");
        assertThat(required.at("/choices/0/finish_reason").stringValue()).isEqualTo("tool_calls");
    }

    @Test
    void reasoningIsSplitOffStreamedAndNotAndCounted() {
        String reply = "<think>\nThe user wants Paris.\n</think>\n\nIt is sunny.";
        cluster.workerA.reply(reply);
        JsonNode whole = Sse.json(chat(ASK));
        assertThat(whole.at("/choices/0/message/reasoning_content").stringValue()).isEqualTo("\nThe user wants Paris.\n");
        assertThat(whole.at("/choices/0/message/content").stringValue()).isEqualTo("It is sunny.");
        int reasoningTokens = whole.at("/usage/completion_tokens_details/reasoning_tokens").intValue();
        assertThat(reasoningTokens).isPositive().isLessThan(whole.at("/usage/completion_tokens").intValue());

        cluster.reset();
        cluster.workerA.reply(reply);
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        List<JsonNode> chunks = Sse.chunks(chat(ASK + ",\"stream\":true,\"stream_options\":{\"include_usage\":true}"));
        for (JsonNode c : chunks) {
            reasoning.append(c.at("/choices/0/delta/reasoning_content").asString(""));
            content.append(c.at("/choices/0/delta/content").asString(""));
        }
        assertThat(reasoning.toString()).isEqualTo("\nThe user wants Paris.\n");
        assertThat(content.toString()).isEqualTo("It is sunny.");
        assertThat(chunks.get(chunks.size() - 1).at("/usage/completion_tokens_details/reasoning_tokens").intValue())
                .isEqualTo(reasoningTokens);
    }

    @Test
    void chatLogprobsCarryTokensBytesAndAlternativesStreamedAndNot() {
        JsonNode body = Sse.json(chat(ASK + ",\"max_tokens\":4,\"logprobs\":true,\"top_logprobs\":2"));
        JsonNode content = body.at("/choices/0/logprobs/content");
        assertThat(content.size()).isEqualTo(4);
        StringBuilder text = new StringBuilder();
        for (JsonNode t : content) {
            assertThat(t.get("logprob").doubleValue()).isEqualTo(-0.25);
            assertThat(t.get("top_logprobs").size()).isEqualTo(2);
            assertThat(t.at("/top_logprobs/0/token").stringValue()).isEqualTo(t.get("token").stringValue());
            byte[] bytes = new byte[t.get("bytes").size()];
            for (int i = 0; i < bytes.length; i++) {
                bytes[i] = (byte) t.get("bytes").get(i).intValue();
            }
            text.append(new String(bytes, java.nio.charset.StandardCharsets.UTF_8));
        }
        assertThat(text.toString()).isEqualTo(body.at("/choices/0/message/content").stringValue());

        int streamed = 0;
        for (JsonNode c : Sse.chunks(chat(ASK + ",\"max_tokens\":4,\"logprobs\":true,\"stream\":true"))) {
            streamed += c.at("/choices/0/logprobs/content").size();
        }
        assertThat(streamed).as("every token's logprob once").isEqualTo(4);
    }

    @Test
    void textCompletionLogprobsHaveTheLegacyShape() {
        JsonNode body = Sse.json(web.post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"prompt\":\"Once\",\"max_tokens\":3,\"logprobs\":2}").exchange().expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody());
        JsonNode lp = body.at("/choices/0/logprobs");
        assertThat(lp.get("tokens").size()).isEqualTo(3);
        assertThat(lp.get("token_logprobs").get(0).doubleValue()).isEqualTo(-0.25);
        assertThat(lp.get("top_logprobs").get(0).size()).isEqualTo(2);
        assertThat(lp.get("text_offset").get(0).intValue()).isZero();
        assertThat(lp.get("text_offset").get(1).intValue()).isEqualTo(lp.get("tokens").get(0).stringValue().length());
    }

    @Test
    void nChoicesComeFromOneGenerateWithIndexesAndSummedUsage() {
        JsonNode body = Sse.json(chat(ASK + ",\"n\":3,\"max_tokens\":5"));
        assertThat(cluster.workerA.generates).hasSize(1);
        assertThat(cluster.workerA.generates.get(0).getN()).isEqualTo(3);
        assertThat(body.get("choices").size()).isEqualTo(3);
        for (int i = 0; i < 3; i++) {
            assertThat(body.at("/choices/" + i + "/index").intValue()).isEqualTo(i);
            assertThat(body.at("/choices/" + i + "/finish_reason").stringValue()).isEqualTo("length");
        }
        assertThat(body.at("/choices/1/message/content").stringValue())
                .isNotEqualTo(body.at("/choices/0/message/content").stringValue());
        assertThat(body.at("/usage/completion_tokens").intValue()).isEqualTo(15);
        assertThat(body.at("/usage/prompt_tokens").intValue()).isEqualTo(cluster.workerA.generates.get(0).getTokenIdsCount());

        Map<Integer, StringBuilder> streamed = new TreeMap<>();
        Map<Integer, String> finish = new TreeMap<>();
        for (JsonNode c : Sse.chunks(chat(ASK + ",\"n\":3,\"max_tokens\":5,\"stream\":true"))) {
            int index = c.at("/choices/0/index").intValue();
            streamed.computeIfAbsent(index, k -> new StringBuilder()).append(c.at("/choices/0/delta/content").asString(""));
            if (c.at("/choices/0/finish_reason").isString()) {
                finish.put(index, c.at("/choices/0/finish_reason").stringValue());
            }
        }
        assertThat(streamed.keySet()).containsExactly(0, 1, 2);
        assertThat(finish).containsOnlyKeys(0, 1, 2);
        assertThat(streamed.get(0).toString()).isEqualTo(body.at("/choices/0/message/content").stringValue());
        assertThat(cluster.router.routes.stream().filter(r -> r.getAllowDisagg()).count())
                .as("n > 1 never goes to a prefill worker").isZero();
    }
}
