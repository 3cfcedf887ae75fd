package io.flotilla.gateway.client;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/** The adaptive Route deadline on a hand-moved clock. */
class RouteDeadlineTest {

    private final AtomicLong now = new AtomicLong();
    private final RouteDeadline deadline = new RouteDeadline(Duration.ofMillis(50), Duration.ofSeconds(1), 99, 2,
            Duration.ofSeconds(10), 20, now::get);

    private void record(int calls, long millis) {
        for (int i = 0; i < calls; i++) {
            deadline.answered(Duration.ofMillis(millis).toNanos());
        }
    }

    private void nextWindow() {
        now.addAndGet(Duration.ofSeconds(10).toNanos());
    }

    @Test
    void aColdGatewayWaitsTheCeilingThenFollowsTwiceTheTail() {
        assertThat(deadline.current()).isEqualTo(Duration.ofSeconds(1));
        record(100, 40);
        assertThat(deadline.current()).as("within the first window nothing moves").isEqualTo(Duration.ofSeconds(1));
        nextWindow();
        assertThat(deadline.current().toMillis()).isBetween(79L, 81L);
    }

    @Test
    void theFloorAndTheCeilingBound() {
        record(100, 2);
        nextWindow();
        assertThat(deadline.current()).isEqualTo(Duration.ofMillis(50));
        record(100, 900);
        nextWindow();
        assertThat(deadline.current()).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void timeoutsRaiseTheDeadlineAndAQuietWindowDoesNotEraseABusyOne() {
        record(100, 10);
        nextWindow();
        assertThat(deadline.current()).isEqualTo(Duration.ofMillis(50));
        for (int i = 0; i < 30; i++) {
            deadline.timedOut(Duration.ofMillis(50)); // slower than the deadline: counted at it
        }
        record(70, 10);
        nextWindow();
        assertThat(deadline.current().toMillis()).as("2 × p99 of a window with 30 %% timeouts").isBetween(99L, 101L);
        record(5, 10); // too few calls to move it
        nextWindow();
        assertThat(deadline.current().toMillis()).isBetween(99L, 101L);
    }
}
