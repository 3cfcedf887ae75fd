package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.ToolCallDelta;
import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.toolcall.ToolCalls;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The pipeline's output written as Anthropic's message and event stream, and read back as the next request. */
class MessageStreamTest {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final TokenUsage USAGE = new TokenUsage(40, 12, 32);

    private static OutputEvent.Delta delta(String reasoning, String content, ToolCallDelta... calls) {
        return new OutputEvent.Delta(0, reasoning, content, List.of(calls), List.of());
    }

    private static MessageStream stream() {
        return new MessageStream(JSON, new MessageRenderer(JSON, "msg_1", "m"));
    }

    private static String names(List<MessageStream.Event> events) {
        return String.join(" ", events.stream().map(e -> {
            JsonNode d = JSON.readTree(e.data());
            assertThat(d.get("type").stringValue()).as("data.type names the event").isEqualTo(e.name());
            String sub = d.has("delta") && d.get("delta").has("type") ? ":" + d.at("/delta/type").stringValue()
                    : d.has("content_block") ? ":" + d.at("/content_block/type").stringValue() : "";
            return e.name() + sub + (d.has("index") ? "#" + d.get("index").intValue() : "");
        }).toList());
    }

    @Test
    void thinkingThenTextThenToolCallsStreamInAnthropicsOrder() {
        MessageStream s = stream();
        List<MessageStream.Event> events = new ArrayList<>(s.start(new TokenUsage(40, 1, 32)));
        events.addAll(s.delta(delta("Let me ", "")));
        events.addAll(s.delta(delta("think.", "")));
        events.addAll(s.delta(delta("", "Looking it up.")));
        events.addAll(s.delta(delta("", "", new ToolCallDelta(0, "call_a", "get_weather", ""),
                new ToolCallDelta(0, null, null, "{\"city\": "))));
        events.addAll(s.delta(delta("", "", new ToolCallDelta(0, null, null, "\"Paris\"}"),
                new ToolCallDelta(1, "call_b", "get_time", ""), new ToolCallDelta(1, null, null, "{}"))));
        events.addAll(s.done("tool_calls", null, USAGE));

        assertThat(names(events)).isEqualTo("message_start ping"
                + " content_block_start:thinking#0 content_block_delta:thinking_delta#0 content_block_delta:thinking_delta#0"
                + " content_block_stop#0"
                + " content_block_start:text#1 content_block_delta:text_delta#1 content_block_stop#1"
                + " content_block_start:tool_use#2 content_block_delta:input_json_delta#2 content_block_delta:input_json_delta#2"
                + " content_block_stop#2"
                + " content_block_start:tool_use#3 content_block_delta:input_json_delta#3 content_block_stop#3"
                + " message_delta message_stop");
        JsonNode start = JSON.readTree(events.get(0).data()).get("message");
        assertThat(start.get("id").stringValue()).isEqualTo("msg_1");
        assertThat(start.get("role").stringValue()).isEqualTo("assistant");
        assertThat(start.get("content").isEmpty()).isTrue();
        assertThat(start.get("stop_reason").isNull()).isTrue();
        assertThat(start.at("/usage/input_tokens").intValue()).isEqualTo(8);
        assertThat(start.at("/usage/cache_read_input_tokens").intValue()).isEqualTo(32);

        JsonNode toolStart = JSON.readTree(events.get(9).data()).get("content_block");
        assertThat(toolStart.get("id").stringValue()).isEqualTo("call_a");
        assertThat(toolStart.get("name").stringValue()).isEqualTo("get_weather");
        assertThat(toolStart.get("input").isEmpty()).isTrue();
        String json = JSON.readTree(events.get(10).data()).at("/delta/partial_json").stringValue()
                + JSON.readTree(events.get(11).data()).at("/delta/partial_json").stringValue();
        assertThat(JSON.readTree(json).get("city").stringValue()).isEqualTo("Paris");

        JsonNode end = JSON.readTree(events.get(events.size() - 2).data());
        assertThat(end.at("/delta/stop_reason").stringValue()).isEqualTo("tool_use");
        assertThat(end.at("/delta/stop_sequence").isNull()).isTrue();
        assertThat(end.at("/usage/output_tokens").intValue()).isEqualTo(12);
        assertThat(end.at("/usage/input_tokens").intValue()).isEqualTo(8);
    }

    @Test
    void anEmptyAnswerStillOpensAndClosesTheMessage() {
        MessageStream s = stream();
        List<MessageStream.Event> events = new ArrayList<>(s.start(USAGE));
        events.addAll(s.done("stop", null, USAGE));
        assertThat(names(events)).isEqualTo("message_start ping message_delta message_stop");
    }

    @Test
    void aFailureAfterTheStartIsAnErrorEvent() {
        MessageStream s = stream();
        s.start(USAGE);
        MessageStream.Event e = s.error(ApiError.badGateway("stream_failed", "The stream failed: gone"));
        assertThat(e.sse()).startsWith("event: error\ndata: ").endsWith("\n\n");
        JsonNode body = JSON.readTree(e.data());
        assertThat(body.get("type").stringValue()).isEqualTo("error");
        assertThat(body.at("/error/type").stringValue()).isEqualTo("api_error");
        assertThat(body.at("/error/message").stringValue()).contains("gone");
    }

    @ParameterizedTest(name = "{0} calls={1} stop={2} -> {3}")
    @CsvSource({
            "stop,       false, ,    end_turn",
            "stop,       false, ###, stop_sequence",
            "length,     false, ,    max_tokens",
            "length,     true,  ,    max_tokens",
            "tool_calls, true,  ,    tool_use",
            "stop,       true,  ,    tool_use",
    })
    void stopReasons(String finish, boolean calls, String stopSequence, String expected) {
        assertThat(MessageRenderer.stopReason(finish, calls, stopSequence)).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} {1} -> {2} {3}")
    @CsvSource({
            "400, , 400, invalid_request_error",
            "401, , 401, authentication_error",
            "404, model_not_found, 404, not_found_error",
            "413, request_too_large, 413, request_too_large",
            "429, rate_limited, 429, rate_limit_error",
            "429, queue_full, 529, overloaded_error",
            "503, queue_timeout, 529, overloaded_error",
            "500, , 500, api_error",
            "502, stream_failed, 502, api_error",
    })
    void errorsTakeAnthropicsTypesAndStatuses(int status, String code, int expectedStatus, String type) {
        ApiError e = new ApiError(status, "x", null, code, "m", null);
        assertThat(AnthropicErrors.status(e)).isEqualTo(expectedStatus);
        assertThat(AnthropicErrors.type(e)).isEqualTo(type);
        assertThat(JSON.readTree(AnthropicErrors.body(JSON, e)).toString())
                .isEqualTo("{\"type\":\"error\",\"error\":{\"type\":\"" + type + "\",\"message\":\"m\"}}");
    }

    /** The client sends the answer back with the tool's result: the next prompt carries the same call. */
    @Test
    void aToolUseComesBackAsTheSameCallWithItsResult() {
        ToolCalls.Call call = new ToolCalls.Call("call_x1", "get_weather", "{\"city\": \"Paris\", \"days\": [1, 2]}");
        ChoiceResult choice = new ChoiceResult(0, "Checking.", "Need weather.", List.of(call), null, "tool_calls");
        JsonNode message = JSON.readTree(new MessageRenderer(JSON, "msg_2", "m").message(choice, null, USAGE));
        assertThat(message.get("type").stringValue()).isEqualTo("message");
        assertThat(message.get("stop_reason").stringValue()).isEqualTo("tool_use");
        assertThat(message.at("/content/0/type").stringValue()).isEqualTo("thinking");
        assertThat(message.at("/content/1/text").stringValue()).isEqualTo("Checking.");
        assertThat(message.at("/content/2/input/days/1").intValue()).isEqualTo(2);
        assertThat(message.at("/usage/output_tokens").intValue()).isEqualTo(12);

        ObjectNode next = JSON.createObjectNode().put("max_tokens", 10);
        ArrayNode messages = next.putArray("messages");
        messages.addObject().put("role", "user").put("content", "Weather?");
        messages.addObject().put("role", "assistant").set("content", message.get("content"));
        ObjectNode result = messages.addObject().put("role", "user").putArray("content").addObject()
                .put("type", "tool_result").put("tool_use_id", message.at("/content/2/id").stringValue())
                .put("content", "Sunny");
        assertThat(result).isNotNull();

        List<ChatMessage> chat = new MessagesRequestParser().parse(next).completion().messages();
        ChatMessage assistant = chat.get(1);
        assertThat(assistant.content()).isEqualTo("Checking.");
        assertThat(assistant.reasoningContent()).isEqualTo("Need weather.");
        assertThat(assistant.toolCalls()).singleElement().satisfies(c -> {
            assertThat(c.id()).isEqualTo("call_x1");
            assertThat(c.name()).isEqualTo("get_weather");
            assertThat(JSON.readTree(c.arguments())).isEqualTo(JSON.readTree(call.arguments()));
        });
        assertThat(chat.get(2)).isEqualTo(new ChatMessage("tool", null, "Sunny", List.of(), "call_x1", null));
    }
}
