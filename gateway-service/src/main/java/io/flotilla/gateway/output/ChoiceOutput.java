package io.flotilla.gateway.output;

import io.flotilla.gateway.reasoning.ReasoningStream;
import io.flotilla.gateway.toolcall.ToolCallSink;
import io.flotilla.gateway.toolcall.ToolCallStream;
import io.flotilla.gateway.toolcall.ToolCalls;
import io.flotilla.protocol.v1.TokenLogprobs;

import java.util.ArrayList;
import java.util.List;

/**
 * One choice's output, from worker tokens to what the client sees: decoded text and stop strings
 * ({@link TextAssembler}), then reasoning split off ({@link ReasoningStream}), then tool calls parsed
 * from the content ({@link ToolCallStream}), with each token's log-probability carried along.
 *
 * <p>Streaming: {@link #apply} returns a {@link OutputEvent.Delta} for what each event made visible
 * (log-probabilities of tokens whose text is still held back wait for the next delta) and a
 * {@link OutputEvent.Done} at the end. Whole responses: {@link #apply} returns only the Done and
 * {@link #result} the choice, with tool calls parsed strictly from the whole content (a malformed call
 * makes it all plain content). Not thread-safe; one per choice, fed in order.
 */
final class ChoiceOutput implements ToolCallSink {

    private final int index;
    private final ResponseShape shape;
    private final TextAssembler text;
    private final ReasoningStream reasoning;
    private final ToolCallStream tools;
    private final boolean streaming;
    private final StringBuilder content = new StringBuilder();
    private final StringBuilder reasoningText = new StringBuilder();
    private final List<ToolCallDelta> calls = new ArrayList<>();
    /** Log-probabilities not sent yet (streaming), or all of them (whole responses). */
    private final List<TokenLogprob> logprobs;
    private final ReasoningStream.Sink split = new ReasoningStream.Sink() {
        @Override
        public void reasoning(String piece) {
            reasoningText.append(piece);
        }

        @Override
        public void content(String piece) {
            answer(piece);
        }
    };
    private int reasoningTokens;
    private int callsSent;
    private boolean rejectedSeen;
    private boolean anyCall;
    private String finishReason;
    private ToolCalls whole;

    ChoiceOutput(int index, ResponseShape shape) {
        this.index = index;
        this.shape = shape;
        this.text = new TextAssembler(shape.tokenizer(), shape.stopStrings());
        this.reasoning = shape.reasoning() == null ? null : shape.reasoning().stream();
        this.tools = shape.toolStream();
        this.streaming = shape.stream();
        this.logprobs = shape.logprobs() ? new ArrayList<>() : null;
    }

    int reasoningTokens() {
        return reasoningTokens;
    }

    /** Tool calls the client got (started ones, when streaming). */
    int toolCalls() {
        return whole != null ? (shape.parallel() ? whole.calls().size() : Math.min(1, whole.calls().size())) : callsSent;
    }

    /** Whether the output held calls so malformed that (some of) it was returned as plain content. */
    boolean malformedCalls() {
        return whole != null ? whole.malformed() : rejectedSeen;
    }

    @Override
    public void rejected() {
        rejectedSeen = true;
    }

    boolean done() {
        return finishReason != null;
    }

    /** The client's stop string that ended the choice, or null. */
    String stopString() {
        return text.stopString();
    }

    /** {@code stop}, {@code length} or {@code tool_calls}; null before the end. */
    String finishReason() {
        return finishReason;
    }

    List<OutputEvent> apply(GenerationEvent event) {
        List<OutputEvent> out = new ArrayList<>(2);
        if (done()) {
            return out;
        }
        if (event instanceof GenerationEvent.Tokens tokens) {
            if (reasoning != null && reasoning.inReasoning()) {
                reasoningTokens += tokens.ids().length;
            }
            if (logprobs != null) {
                for (int i = 0; i < tokens.ids().length && i < tokens.logprobs().size(); i++) {
                    logprobs.add(shape.logprob(tokens.ids()[i], tokens.logprobs().get(i)));
                }
            }
        }
        for (TextEvent e : text.apply(event)) {
            if (e instanceof TextEvent.Delta d) {
                route(d.text());
            } else if (e instanceof TextEvent.Done d) {
                finish(d.finishReason());
            }
        }
        if (streaming) {
            delta(out);
        }
        if (done()) {
            out.add(new OutputEvent.Done(index, finishReason));
        }
        return out;
    }

    /** Reasoning, then content: content goes through the tool-call parse when the request has tools. */
    private void route(String piece) {
        if (reasoning != null) {
            reasoning.push(piece, split);
        } else {
            answer(piece);
        }
    }

    /** The answer's text: parsed for calls as it streams, or kept whole for the strict parse at the end. */
    private void answer(String piece) {
        if (tools != null && streaming) {
            tools.push(piece, this);
        } else {
            content.append(piece);
        }
    }

    private void finish(String reason) {
        if (reasoning != null) {
            reasoning.finish(split);
        }
        if (tools != null && streaming) {
            tools.finish(this);
        }
        if (tools != null && !streaming) {
            whole = ToolCalls.strict(tools, content.toString());
            anyCall = !whole.calls().isEmpty();
        }
        finishReason = anyCall && "stop".equals(reason) && !shape.namedFunction() ? "tool_calls" : reason;
    }

    /** Content the tool-call parse let through. */
    @Override
    public void content(String piece) {
        content.append(piece);
    }

    @Override
    public void callStarted(int call, String id, String name) {
        if (call > 0 && !shape.parallel()) {
            return; // parallel_tool_calls false: the first call only
        }
        anyCall = true;
        callsSent++;
        calls.add(new ToolCallDelta(call, id, name, ""));
    }

    @Override
    public void callArguments(int call, String fragment) {
        if (call > 0 && !shape.parallel()) {
            return;
        }
        ToolCallDelta last = calls.isEmpty() ? null : calls.get(calls.size() - 1);
        if (last != null && last.index() == call && !last.first()) {
            calls.set(calls.size() - 1, new ToolCallDelta(call, null, null, last.arguments() + fragment));
        } else {
            calls.add(new ToolCallDelta(call, null, null, fragment));
        }
    }

    /** What became visible since the last delta, as one delta (or nothing). */
    private void delta(List<OutputEvent> out) {
        boolean hasLogprobs = logprobs != null && !logprobs.isEmpty();
        boolean visible = !content.isEmpty() || !reasoningText.isEmpty() || !calls.isEmpty();
        if (!visible && !(hasLogprobs && done())) {
            return;
        }
        out.add(new OutputEvent.Delta(index, reasoningText.toString(), content.toString(), List.copyOf(calls),
                hasLogprobs ? List.copyOf(logprobs) : List.of()));
        content.setLength(0);
        reasoningText.setLength(0);
        calls.clear();
        if (hasLogprobs) {
            logprobs.clear();
        }
    }

    /** The whole choice (non-streamed responses), once it is done. */
    ChoiceResult result() {
        List<ToolCalls.Call> parsed = whole == null ? List.of() : whole.calls();
        if (!shape.parallel() && parsed.size() > 1) {
            parsed = parsed.subList(0, 1);
        }
        String answer = whole == null ? content.toString() : whole.content();
        String thought = reasoning == null || reasoningText.isEmpty() ? null : reasoningText.toString();
        return new ChoiceResult(index, parsed.isEmpty() || !answer.isEmpty() ? answer : null, thought, parsed,
                logprobs == null ? null : List.copyOf(logprobs), finishReason);
    }
}
