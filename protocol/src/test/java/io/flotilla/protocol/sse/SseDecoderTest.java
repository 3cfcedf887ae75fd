package io.flotilla.protocol.sse;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SseDecoderTest {

    private record Event(String type, String data, long nanos) {
    }

    private final List<Event> events = new ArrayList<>();
    private final SseDecoder decoder = new SseDecoder((t, d, n) -> events.add(new Event(t, d, n)));

    @Test
    void dataLinesAreDispatchedOnBlankLinesWithTheirFirstArrivalTime() {
        decoder.line(": keep-alive comment", 1);
        decoder.line("data: {\"a\":1}", 10);
        decoder.line("", 11);
        decoder.line("data:{\"b\":2}", 20);
        decoder.line("", 21);
        decoder.line("data: [DONE]", 30);
        decoder.line("", 31);

        assertThat(events).containsExactly(new Event("message", "{\"a\":1}", 10), new Event("message", "{\"b\":2}", 20),
                new Event("message", "[DONE]", 30));
    }

    @Test
    void multiLineDataIsJoinedAndEventTypesApplyToOneEvent() {
        decoder.line("event: error", 1);
        decoder.line("data: {\"error\":", 2);
        decoder.line("data:  {\"message\":\"x\"}}", 3);
        decoder.line("id: 7", 4);
        decoder.line("", 5);
        decoder.line("data: next", 6);
        decoder.line("", 7);

        assertThat(events).containsExactly(new Event("error", "{\"error\":\n {\"message\":\"x\"}}", 2),
                new Event("message", "next", 6));
    }

    @Test
    void anEventWithoutItsBlankLineIsDispatchedAtTheEnd() {
        decoder.line("data: last", 5);
        assertThat(events).isEmpty();
        decoder.end();
        assertThat(events).containsExactly(new Event("message", "last", 5));
        decoder.line("", 6);
        decoder.end();
        assertThat(events).hasSize(1);
    }
}
