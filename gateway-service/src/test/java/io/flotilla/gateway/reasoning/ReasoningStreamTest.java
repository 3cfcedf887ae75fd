package io.flotilla.gateway.reasoning;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Both reasoning families on whole outputs and on the same outputs split at every position. */
class ReasoningStreamTest {

    static Stream<Arguments> outputs() {
        ReasoningParser r1 = ReasoningParser.DEEPSEEK_R1;
        ReasoningParser qwen = ReasoningParser.QWEN3;
        return Stream.of(
                Arguments.of(qwen, "<think>\nLet me think.\n</think>\n\nParis.", "\nLet me think.\n", "Paris."),
                Arguments.of(qwen, "Paris, no thinking.", "", "Paris, no thinking."),
                Arguments.of(qwen, "  <think>a</think>b", "a", "b"),
                Arguments.of(qwen, "<thin", "", "<thin"),
                Arguments.of(qwen, "<think>cut short by max_tokens", "cut short by max_tokens", ""),
                Arguments.of(qwen, "5 < 6 and <think> later is content", "", "5 < 6 and <think> later is content"),
                Arguments.of(r1, "The template opened the block.\n</think>\n\nAnswer.", "The template opened the block.\n", "Answer."),
                Arguments.of(r1, "<think>Own tag.</think>Answer.", "Own tag.", "Answer."),
                Arguments.of(r1, "never closed", "never closed", ""),
                Arguments.of(r1, "a < b </thi", "a < b </thi", ""));
    }

    private static String[] run(ReasoningParser parser, String output, int... cuts) {
        StringBuilder reasoning = new StringBuilder();
        StringBuilder content = new StringBuilder();
        ReasoningStream.Sink sink = new ReasoningStream.Sink() {
            @Override
            public void reasoning(String text) {
                reasoning.append(text);
            }

            @Override
            public void content(String text) {
                content.append(text);
            }
        };
        ReasoningStream s = parser.stream();
        int from = 0;
        for (int cut : cuts) {
            s.push(output.substring(from, cut), sink);
            from = cut;
        }
        s.push(output.substring(from), sink);
        s.finish(sink);
        return new String[] {reasoning.toString(), content.toString()};
    }

    @ParameterizedTest
    @MethodSource("outputs")
    void splitsWholeAndStreamedOutputsAlike(ReasoningParser parser, String output, String reasoning, String content) {
        assertThat(run(parser, output)).containsExactly(reasoning, content);
        for (int cut = 1; cut < output.length(); cut++) {
            assertThat(run(parser, output, cut)).as("split at %d", cut).containsExactly(reasoning, content);
        }
        int[] everyChar = new int[Math.max(0, output.length() - 1)];
        for (int i = 0; i < everyChar.length; i++) {
            everyChar[i] = i + 1;
        }
        assertThat(run(parser, output, everyChar)).as("one character at a time").containsExactly(reasoning, content);
    }
}
