package io.flotilla.gateway.toolcall;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every parser against whole outputs and against the same outputs streamed in pieces split at every
 * position (a marker or a JSON string split across tokens), with well-formed and malformed calls.
 */
class ToolCallParsersTest {

    record Expected(String content, List<String> calls) {
    }

    private static final String WEATHER = "{\"city\": \"Paris\", \"unit\": \"celsius\"}";
    private static final String TIME = "{\"tz\": \"Europe/Paris\"}";

    private static Expected calls(String content, String... nameAndArgs) {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < nameAndArgs.length; i += 2) {
            out.add(nameAndArgs[i] + " " + nameAndArgs[i + 1]);
        }
        return new Expected(content, out);
    }

    private static Expected content(String text) {
        return new Expected(text, List.of());
    }

    static Stream<Arguments> outputs() {
        ToolCallParser hermes = new HermesToolParser();
        ToolCallParser llama = new Llama3JsonToolParser();
        ToolCallParser mistral = new MistralToolParser();
        ToolCallParser deepseek = new DeepSeekV3ToolParser();
        String dsCall = DeepSeekV3ToolParser.CALL_BEGIN + "function" + DeepSeekV3ToolParser.SEP + "get_weather\n```json\n"
                + WEATHER + "\n```" + DeepSeekV3ToolParser.CALL_END;
        return Stream.of(
                Arguments.of(hermes, "Hello, no tools here.", content("Hello, no tools here.")),
                Arguments.of(hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + WEATHER + "}\n</tool_call>",
                        calls("", "get_weather", WEATHER)),
                Arguments.of(hermes, "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + WEATHER
                        + "}\n</tool_call>\n<tool_call>\n{\"arguments\": " + TIME + ", \"name\": \"get_time\"}\n</tool_call>",
                        calls("Let me check.\n", "get_weather", WEATHER, "get_time", TIME)),
                Arguments.of(hermes, "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + WEATHER + "}",
                        calls("", "get_weather", WEATHER)), // closing tag missing at the end
                Arguments.of(hermes, "<tool_call>\n{\"name\": \"f\", \"arguments\": \"{\\\"a\\\": 1}\"}\n</tool_call>",
                        calls("", "f", "{\"a\": 1}")), // arguments as an encoded string
                Arguments.of(hermes, "<tool_call>\n{\"name\": \"f\"}\n</tool_call>", calls("", "f", "{}")),
                Arguments.of(hermes, "<tool_call>\nnot json at all\n</tool_call> ok", content(
                        "<tool_call>\nnot json at all\n</tool_call> ok")),
                Arguments.of(hermes, "<tool_call>\n{\"arguments\": {}}\n</tool_call>", content(
                        "<tool_call>\n{\"arguments\": {}}\n</tool_call>")),
                Arguments.of(hermes, "a < b and <tool_ but not a call", content("a < b and <tool_ but not a call")),
                Arguments.of(llama, "{\"name\": \"get_weather\", \"parameters\": " + WEATHER + "}",
                        calls("", "get_weather", WEATHER)),
                Arguments.of(llama, "<|python_tag|>{\"name\": \"get_weather\", \"parameters\": " + WEATHER
                        + "}; {\"name\": \"get_time\", \"arguments\": " + TIME + "}",
                        calls("", "get_weather", WEATHER, "get_time", TIME)),
                Arguments.of(llama, "The answer is {\"x\": 1}", content("The answer is {\"x\": 1}")),
                Arguments.of(llama, "{\"x\": 1, \"y\": 2}", content("{\"x\": 1, \"y\": 2}")),
                Arguments.of(llama, "{\"name\" oops", content("{\"name\" oops")),
                Arguments.of(mistral, "[TOOL_CALLS] [{\"name\": \"get_weather\", \"arguments\": " + WEATHER
                        + "}, {\"name\": \"get_time\", \"arguments\": " + TIME + "}]",
                        calls("", "get_weather", WEATHER, "get_time", TIME)),
                Arguments.of(mistral, "Sure.[TOOL_CALLS]get_weather[ARGS]" + WEATHER + "[TOOL_CALLS]get_time[ARGS]" + TIME,
                        calls("Sure.", "get_weather", WEATHER, "get_time", TIME)),
                Arguments.of(mistral, "No calls [TOOL_ here", content("No calls [TOOL_ here")),
                Arguments.of(mistral, "[TOOL_CALLS] [garbage", content("[TOOL_CALLS] [garbage")),
                Arguments.of(deepseek, "Checking." + DeepSeekV3ToolParser.CALLS_BEGIN + dsCall + DeepSeekV3ToolParser.CALLS_END,
                        calls("Checking.", "get_weather", WEATHER)),
                Arguments.of(deepseek, DeepSeekV3ToolParser.CALLS_BEGIN + DeepSeekV3ToolParser.CALL_BEGIN + "get_time"
                        + DeepSeekV3ToolParser.SEP + TIME + DeepSeekV3ToolParser.CALL_END + dsCall
                        + DeepSeekV3ToolParser.CALLS_END, calls("", "get_time", TIME, "get_weather", WEATHER)),
                Arguments.of(deepseek, "plain text", content("plain text")),
                Arguments.of(deepseek, DeepSeekV3ToolParser.CALLS_BEGIN + "oops", content(DeepSeekV3ToolParser.CALLS_BEGIN + "oops")));
    }

    private static Supplier<String> ids() {
        AtomicInteger n = new AtomicInteger();
        return () -> "id" + n.incrementAndGet();
    }

    private static Expected whole(ToolCallParser parser, String output) {
        ToolCalls parsed = ToolCalls.strict(parser.stream(ids()), output);
        return new Expected(parsed.content(), parsed.calls().stream().map(c -> c.name() + " " + c.arguments()).toList());
    }

    /** Streams {@code output} in pieces that end at the given positions. */
    private static Expected streamed(ToolCallParser parser, String output, List<Integer> cuts) {
        ToolCalls.Collector c = new ToolCalls.Collector();
        ToolCallStream s = parser.stream(ids());
        int from = 0;
        for (int cut : cuts) {
            s.push(output.substring(from, cut), c);
            from = cut;
        }
        s.push(output.substring(from), c);
        s.finish(c);
        List<String> calls = new ArrayList<>();
        for (int i = 0; i < c.names.size(); i++) {
            calls.add(c.names.get(i) + " " + c.arguments.get(i).toString().strip());
            assertThat(c.ids.get(i)).isEqualTo("id" + (i + 1));
        }
        return new Expected(c.content.toString(), calls);
    }

    @ParameterizedTest
    @MethodSource("outputs")
    void wholeOutputs(ToolCallParser parser, String output, Expected expected) {
        assertThat(whole(parser, output)).isEqualTo(expected);
    }

    @ParameterizedTest
    @MethodSource("outputs")
    void streamedOutputsSplitAnywhereGiveTheSameCalls(ToolCallParser parser, String output, Expected expected) {
        if (!expected.calls().isEmpty() || expected.content().equals(output)) {
            for (int cut = 1; cut < output.length(); cut++) {
                assertThat(streamed(parser, output, List.of(cut))).as("split at %d", cut).isEqualTo(expected);
            }
            List<Integer> everyChar = new ArrayList<>();
            for (int i = 1; i < output.length(); i++) {
                everyChar.add(i);
            }
            assertThat(streamed(parser, output, everyChar)).as("one character at a time").isEqualTo(expected);
            SplittableRandom random = new SplittableRandom(7);
            for (int round = 0; round < 20; round++) {
                List<Integer> cuts = new ArrayList<>();
                for (int at = 1 + random.nextInt(4); at < output.length(); at += 1 + random.nextInt(5)) {
                    cuts.add(at);
                }
                assertThat(streamed(parser, output, cuts)).as("token-sized pieces, round %d", round).isEqualTo(expected);
            }
        }
    }

    @Test
    void aStreamedCallStartsOnlyOnceItsNameIsCompleteAndArgumentsFollowInFragments() {
        List<String> events = new ArrayList<>();
        ToolCallSink sink = new ToolCallSink() {
            @Override
            public void content(String text) {
                events.add("content " + text);
            }

            @Override
            public void callStarted(int index, String id, String name) {
                events.add("start " + index + " " + name);
            }

            @Override
            public void callArguments(int index, String fragment) {
                events.add("args " + index + " " + fragment);
            }
        };
        ToolCallStream s = new HermesToolParser().stream(ids());
        for (String piece : List.of("Hi <tool", "_call>\n{\"na", "me\": \"get_w", "eather\", \"argu", "ments\": {\"ci",
                "ty\": \"Par", "is\"}}\n</tool_call>")) {
            s.push(piece, sink);
        }
        s.finish(sink);
        assertThat(events).containsExactly("content Hi ", "start 0 get_weather", "args 0 {\"ci", "args 0 ty\": \"Par",
                "args 0 is\"}");
    }

    @Test
    void aWholeOutputWhoseCallBreaksAfterItsNameIsPlainContent() {
        for (ToolCallParser parser : List.of(new HermesToolParser(), new Llama3JsonToolParser(), new MistralToolParser())) {
            String output = switch (parser.name()) {
                case "hermes" -> "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": }\n</tool_call>";
                case "mistral" -> "[TOOL_CALLS] [{\"name\": \"f\", \"arguments\": {\"a\": 1}, oops]";
                default -> "{\"name\": \"f\", \"parameters\": {\"a\": 1} oops";
            };
            assertThat(whole(parser, output)).as(parser.name()).isEqualTo(content(output));
        }
        String cutShort = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1";
        assertThat(whole(new HermesToolParser(), cutShort)).as("max_tokens ended it").isEqualTo(content(cutShort));
        assertThat(ToolCalls.strict(new HermesToolParser().stream(ids()), cutShort).malformed()).isTrue();
        String broken = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": }\n</tool_call>";
        assertThat(ToolCalls.strict(new HermesToolParser().stream(ids()), broken).malformed()).isTrue();
        assertThat(ToolCalls.strict(new HermesToolParser().stream(ids()), "no calls").malformed()).isFalse();
    }

    @Test
    void forcedCallsReadTheConstrainedJson() {
        ToolCalls named = ToolCalls.strict(ForcedToolCalls.named("get_weather", ids()), WEATHER);
        assertThat(named.calls()).extracting(ToolCalls.Call::name, ToolCalls.Call::arguments)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("get_weather", WEATHER));
        ToolCalls required = ToolCalls.strict(ForcedToolCalls.required(ids()),
                "[{\"name\": \"get_time\", \"parameters\": " + TIME + "}]");
        assertThat(required.calls()).extracting(ToolCalls.Call::name).containsExactly("get_time");
        assertThat(ToolCalls.strict(ForcedToolCalls.named("f", ids()), "{\"a\": ").calls())
                .as("cut short: not JSON, so plain content").isEmpty();
    }
}
