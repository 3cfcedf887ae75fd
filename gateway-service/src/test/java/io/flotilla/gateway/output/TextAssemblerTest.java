package io.flotilla.gateway.output;

import io.flotilla.gateway.generation.RequestEvent;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.protocol.v1.FinishReason;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class TextAssemblerTest {

    private static final Cl100kTokenizer TOKENIZER = new Cl100kTokenizer();

    private static List<TextEvent> feed(TextAssembler a, String text, FinishReason end) {
        List<TextEvent> out = new ArrayList<>();
        for (int id : TOKENIZER.encode(text)) {
            out.addAll(a.apply(new RequestEvent.Tokens(new int[]{id}, java.time.Instant.EPOCH, false, null)));
        }
        if (end != null) {
            out.addAll(a.apply(new RequestEvent.Finished(end)));
        }
        return out;
    }

    private static String text(List<TextEvent> events) {
        StringBuilder sb = new StringBuilder();
        events.stream().filter(e -> e instanceof TextEvent.Delta).forEach(e -> sb.append(((TextEvent.Delta) e).text()));
        return sb.toString();
    }

    @Test
    void aStopStringSpanningTokensEndsTheOutputBeforeIt() {
        TextAssembler a = new TextAssembler(TOKENIZER, List.of("lazy dog"));
        List<TextEvent> events = feed(a, "The quick brown fox jumps over the lazy dog and more", null);
        assertThat(text(events)).isEqualTo("The quick brown fox jumps over the ");
        assertThat(events.get(events.size() - 1)).isEqualTo(new TextEvent.Done("stop"));
        assertThat(a.apply(new RequestEvent.Finished(FinishReason.FINISH_REASON_LENGTH))).isEmpty();
    }

    @Test
    void heldBackTextIsReleasedWhenTheWorkerFinishes() {
        TextAssembler a = new TextAssembler(TOKENIZER, List.of("fox and hound"));
        List<TextEvent> events = feed(a, "the fox", FinishReason.FINISH_REASON_LENGTH);
        assertThat(text(events)).isEqualTo("the fox");
        assertThat(events.get(events.size() - 1)).isEqualTo(new TextEvent.Done("length"));
    }

    @Test
    void theWorkersStopIsAStopFinish() {
        TextAssembler a = new TextAssembler(TOKENIZER, List.of());
        List<TextEvent> events = feed(a, "hi", FinishReason.FINISH_REASON_STOP);
        assertThat(events).containsExactly(new TextEvent.Delta("hi"), new TextEvent.Done("stop"));
    }
}
