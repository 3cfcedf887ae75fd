package io.flotilla.gateway.output;

import io.flotilla.gateway.reasoning.ReasoningParser;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.gateway.toolcall.ToolCallStream;
import io.flotilla.protocol.v1.TokenLogprobs;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * How one request's output is turned into what its client sees: the model's decoding and parsers
 * and what the request asked for. Immutable; {@link #assembler()} makes the per-request state.
 *
 * @param choices      choices to expect (n)
 * @param stream       streamed (parse as it comes) or whole (parse the whole content strictly)
 * @param stopStrings  stop strings matched on the decoded text
 * @param model        the model's tokenizer and parsers
 * @param reasoning    split reasoning off (chat of a model with a reasoning parser), else null
 * @param tools        a fresh tool-call parse of one choice, or null when the output is not parsed for calls
 * @param parallel     {@code parallel_tool_calls}: false keeps the first call only
 * @param namedFunction {@code tool_choice} names a function: calls end with {@code stop}, as OpenAI's do
 * @param logprobs     return log-probabilities
 * @param topLogprobs  alternatives per token
 */
public record ResponseShape(int choices, boolean stream, List<String> stopStrings, ModelOutput model,
                            ReasoningParser reasoning, Supplier<ToolCallStream> tools, boolean parallel,
                            boolean namedFunction, boolean logprobs, int topLogprobs) {

    public ResponseShape {
        stopStrings = List.copyOf(stopStrings);
    }

    Tokenizer tokenizer() {
        return model.tokenizer();
    }

    ToolCallStream toolStream() {
        return tools == null ? null : tools.get();
    }

    public ResponseAssembler assembler() {
        return new ResponseAssembler(this);
    }

    /** A token's log-probability in the client's terms (its text and bytes from the tokenizer). */
    TokenLogprob logprob(int id, TokenLogprobs lp) {
        int n = Math.min(topLogprobs, lp.getTopTokenIdsCount());
        List<TokenLogprob.Alternative> top = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            int alt = lp.getTopTokenIds(i);
            byte[] bytes = tokenizer().tokenBytes(alt);
            top.add(new TokenLogprob.Alternative(text(bytes), bytes, lp.getTopLogprobs(i)));
        }
        byte[] bytes = tokenizer().tokenBytes(id);
        return new TokenLogprob(text(bytes), bytes, lp.getLogprob(), top);
    }

    private static String text(byte[] bytes) {
        return bytes == null ? "" : new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }
}
