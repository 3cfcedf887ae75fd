package io.flotilla.gateway.output;

import io.flotilla.gateway.tokenize.IncrementalDetokenizer;
import io.flotilla.gateway.tokenize.StopStringMatcher;
import io.flotilla.gateway.tokenize.Tokenizer;
import io.flotilla.protocol.v1.FinishReason;

import java.util.ArrayList;
import java.util.List;

/**
 * Turns one request's attempt events into {@link TextEvent}s: incremental UTF-8-safe decoding,
 * then stop-string matching. A stop string ends the output right before it with {@code stop}, even
 * while the worker is still generating (the caller then cancels the worker call). Not thread-safe;
 * one instance per request, fed in order.
 */
public final class TextAssembler {

    private final IncrementalDetokenizer detokenizer;
    private final StopStringMatcher stops;
    private boolean done;

    public TextAssembler(Tokenizer tokenizer, List<String> stopStrings) {
        this.detokenizer = new IncrementalDetokenizer(tokenizer);
        this.stops = new StopStringMatcher(stopStrings);
    }

    /** Text events caused by {@code event}; nothing after the first {@link TextEvent.Done}. */
    public List<TextEvent> apply(GenerationEvent event) {
        List<TextEvent> out = new ArrayList<>(2);
        if (done) {
            return out;
        }
        if (event instanceof GenerationEvent.Tokens tokens && tokens.ids().length > 0) {
            StopStringMatcher.Step step = stops.push(detokenizer.push(tokens.ids()));
            add(out, step.text());
            if (step.stopped()) {
                finish(out, "stop");
            }
        } else if (event instanceof GenerationEvent.Finished finished) {
            StopStringMatcher.Step step = stops.push(detokenizer.finish());
            add(out, step.text());
            if (!step.stopped()) {
                add(out, stops.flush());
            }
            finish(out, step.stopped() || finished.reason() == FinishReason.FINISH_REASON_STOP ? "stop" : "length");
        }
        return out;
    }

    /** The stop string that ended the output, or null (not ended, or ended by the engine or the length limit). */
    public String stopString() {
        return stops.matched();
    }

    private void finish(List<TextEvent> out, String reason) {
        done = true;
        out.add(new TextEvent.Done(reason));
    }

    private static void add(List<TextEvent> out, String text) {
        if (!text.isEmpty()) {
            out.add(new TextEvent.Delta(text));
        }
    }
}
