package io.flotilla.planner.plan;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import static io.flotilla.planner.core.Pool.AGGREGATED;
import static io.flotilla.planner.core.Pool.DECODE;
import static io.flotilla.planner.core.Pool.PREFILL;
import static org.assertj.core.api.Assertions.assertThat;

class ColdStartTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static Instant at(int seconds) {
        return T0.plusSeconds(seconds);
    }

    @Test
    void thePriorUntilAStartCompletesThenTheLongestRecentStart() {
        ColdStart c = new ColdStart(Duration.ofSeconds(120), 5);
        assertThat(c.estimate(AGGREGATED)).isEqualTo(Duration.ofSeconds(120));
        c.target(AGGREGATED, 1, 3, 1, at(0));         // two starts
        c.ready(AGGREGATED, 1, at(5));
        assertThat(c.measured(AGGREGATED)).isFalse();
        c.ready(AGGREGATED, 2, at(15));                // the first is READY after 15 s
        assertThat(c.estimate(AGGREGATED)).isEqualTo(Duration.ofSeconds(15));
        c.ready(AGGREGATED, 3, at(20));                // the second after 20 s
        assertThat(c.estimate(AGGREGATED)).isEqualTo(Duration.ofSeconds(20));
        assertThat(c.measured(AGGREGATED)).isTrue();
    }

    @Test
    void onlyTheLastFewStartsCount() {
        ColdStart c = new ColdStart(Duration.ofSeconds(120), 2);
        int[] took = {90, 10, 15};
        int t = 0;
        for (int i = 0; i < took.length; i++) {
            c.target(AGGREGATED, 1, 2, 1, at(t));
            c.ready(AGGREGATED, 2, at(t + took[i]));
            c.target(AGGREGATED, 2, 1, 2, at(t + took[i]));
            t += 200;
        }
        assertThat(c.estimate(AGGREGATED)).isEqualTo(Duration.ofSeconds(15)); // the 90 s start left the window
    }

    @Test
    void replicasAlreadyReadyAndCancelledStartsAreNotMeasured() {
        ColdStart c = new ColdStart(Duration.ofSeconds(60), 5);
        c.target(AGGREGATED, 2, 3, 3, at(0));          // a draining replica is still READY: nothing to start
        c.ready(AGGREGATED, 3, at(5));
        assertThat(c.measured(AGGREGATED)).isFalse();
        c.target(AGGREGATED, 3, 5, 3, at(10));         // two starts …
        c.target(AGGREGATED, 5, 4, 3, at(15));         // … one cancelled
        c.ready(AGGREGATED, 5, at(40));
        assertThat(c.estimate(AGGREGATED)).isEqualTo(Duration.ofSeconds(30));
        c.target(AGGREGATED, 4, 6, 4, at(50));         // never becomes READY: dropped after 10 × the prior
        c.ready(AGGREGATED, 4, at(50 + 601));
        c.ready(AGGREGATED, 6, at(50 + 700));
        assertThat(c.estimate(AGGREGATED)).isEqualTo(Duration.ofSeconds(30));
    }

    @Test
    void theLookaheadCoversTheSlowestPool() {
        ColdStart c = new ColdStart(Duration.ofSeconds(120), 5);
        c.target(PREFILL, 0, 1, 0, at(0));
        c.ready(PREFILL, 1, at(30));
        assertThat(c.estimate(List.of(PREFILL, DECODE))).as("decode not measured yet: its prior")
                .isEqualTo(Duration.ofSeconds(120));
        c.target(DECODE, 1, 2, 1, at(0));
        c.ready(DECODE, 2, at(45));
        assertThat(c.estimate(List.of(PREFILL, DECODE))).isEqualTo(Duration.ofSeconds(45));
    }
}
