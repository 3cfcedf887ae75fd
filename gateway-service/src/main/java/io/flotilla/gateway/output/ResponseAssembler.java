package io.flotilla.gateway.output;


import java.util.ArrayList;
import java.util.List;

/**
 * The output of one request, all its choices: routes each worker event to its choice's
 * {@link ChoiceOutput} and ends with {@link OutputEvent.End} once every choice is done. Not
 * thread-safe; one per request, fed in order (the request's reactive chain).
 */
public final class ResponseAssembler {

    private final ResponseShape shape;
    private final ChoiceOutput[] choices;
    private int done;

    ResponseAssembler(ResponseShape shape) {
        this.shape = shape;
        this.choices = new ChoiceOutput[shape.choices()];
        for (int i = 0; i < choices.length; i++) {
            choices[i] = new ChoiceOutput(i, shape);
        }
    }

    /**
     * What {@code event} made visible; the last event of all is {@link OutputEvent.End}. Only tokens and
     * ends of choices make output; routing and migration events make none.
     */
    public List<OutputEvent> apply(GenerationEvent event) {
        int index;
        if (event instanceof GenerationEvent.Tokens t) {
            index = t.choice();
        } else if (event instanceof GenerationEvent.Finished f) {
            index = f.choice();
        } else {
            return List.of();
        }
        if (index < 0 || index >= choices.length) {
            throw new IllegalStateException("the worker sent choice " + index + " of a request with " + choices.length);
        }
        ChoiceOutput choice = choices[index];
        boolean wasDone = choice.done();
        List<OutputEvent> out = choice.apply(event);
        if (!wasDone && choice.done() && ++done == choices.length) {
            out = new ArrayList<>(out);
            out.add(new OutputEvent.End());
        }
        return out;
    }

    /** Tokens that went to reasoning, over every choice. */
    public int reasoningTokens() {
        int sum = 0;
        for (ChoiceOutput c : choices) {
            sum += c.reasoningTokens();
        }
        return sum;
    }

    /** Tool calls returned, over every choice. */
    public int toolCalls() {
        int sum = 0;
        for (ChoiceOutput c : choices) {
            sum += c.toolCalls();
        }
        return sum;
    }

    /** Choices whose malformed calls were returned as plain content. */
    public int malformedToolOutputs() {
        int sum = 0;
        for (ChoiceOutput c : choices) {
            sum += c.malformedCalls() ? 1 : 0;
        }
        return sum;
    }

    /** Every choice of a whole (non-streamed) response; valid after {@link OutputEvent.End}. */
    public List<ChoiceResult> results() {
        List<ChoiceResult> out = new ArrayList<>(choices.length);
        for (ChoiceOutput c : choices) {
            out.add(c.result());
        }
        return out;
    }

    /** The stop string that ended {@code choice}, or null (Anthropic's {@code stop_sequence}). */
    public String stopString(int choice) {
        return choices[choice].stopString();
    }

    /** The finish reason of choice 0 (for accounting). */
    public String firstFinishReason() {
        return choices[0].finishReason();
    }
}
