package io.flotilla.router.client;

import org.assertj.core.data.Percentage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The adaptive FindMatches deadline: clamp(margin · p99 over the window, floor, ceiling). */
class DeadlineEstimatorTest {

    private static final DeadlineEstimator.Settings SETTINGS = new DeadlineEstimator.Settings(
            Duration.ofMillis(5), Duration.ofMillis(50), 0.99, 1.5, 10, 20);

    @ParameterizedTest(name = "{0} calls of {1} µs and {2} of {3} µs → deadline {4} µs")
    @CsvSource({
            // calls, latency, slow calls, slow latency, expected deadline (µs)
            "100,  2000,  0,      0,  5000",   // tail 2 ms · 1.5 = 3 ms: the floor
            "100, 20000,  0,      0, 30000",   // tail 20 ms · 1.5
            "100, 40000,  0,      0, 50000",   // 60 ms: the ceiling
            "990,  1000, 10,  30000,  5000",   // 1 % slow: p99 is still a fast call, so the floor
            "980,  1000, 20,  30000, 45000",   // 2 % slow: p99 is the slow calls
            "10,  20000,  0,      0, 50000",   // too few calls: still the first deadline (the ceiling)
    })
    void theDeadlineIsTheMarginTimesTheTailClampedToFloorAndCeiling(int calls, long micros, int slow, long slowMicros,
                                                                    long expectedMicros) {
        DeadlineEstimator e = new DeadlineEstimator(SETTINGS);
        for (int i = 0; i < calls; i++) {
            e.record(micros * 1000);
        }
        for (int i = 0; i < slow; i++) {
            e.record(slowMicros * 1000);
        }
        e.roll();
        assertThat(e.deadlineNanos() / 1000.0).isCloseTo((double) expectedMicros,
                Percentage.withPercentage(2)); // HdrHistogram keeps 2 significant digits
    }

    @ParameterizedTest(name = "prefill {0} ms at share {1}, ceiling {2} ms → budget {3} ms (deadline 50 ms)")
    @CsvSource({
            // prefill at stake (ms; 0 unknown), share, stake ceiling (ms), expected budget (ms)
            "0,     0.2, 250,  50",   // nothing known: the deadline
            "100,   0.2, 250,  50",   // 20 ms at stake is under the deadline: the deadline
            "400,   0.2, 250,  80",   // a long prompt may wait a fifth of its prefill
            "5000,  0.2, 250, 250",   // a very long one no longer than the ceiling
            "5000,  0,   250,  50",   // share 0: the stake is off
            "5000,  0.2,  20,  50",   // a ceiling under the deadline never shortens it
    })
    void aLongPromptMayWaitItsShareOfThePrefillItsAnswerMaySave(long prefillMs, double share, long ceilingMs,
                                                                long expectedMs) {
        DeadlineEstimator e = new DeadlineEstimator(SETTINGS,
                new DeadlineEstimator.Stake(share, Duration.ofMillis(ceilingMs)));
        assertThat(e.budgetNanos(Duration.ofMillis(prefillMs).toNanos())).isEqualTo(Duration.ofMillis(expectedMs).toNanos());
        assertThat(new DeadlineEstimator(SETTINGS).budgetNanos(Duration.ofSeconds(5).toNanos()))
                .as("no stake configured: the deadline").isEqualTo(Duration.ofMillis(50).toNanos());
    }

    @Test
    void aStakeOutsideItsRangeIsRefused() {
        assertThatThrownBy(() -> new DeadlineEstimator.Stake(1.5, Duration.ofMillis(10)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DeadlineEstimator.Stake(0.2, Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void beforeAnyCallTheDeadlineIsTheCeilingAndNoTailIsKnown() {
        DeadlineEstimator e = new DeadlineEstimator(SETTINGS);
        e.roll();
        assertThat(e.deadlineNanos()).isEqualTo(Duration.ofMillis(50).toNanos());
        assertThat(e.tailNanos()).isEqualTo(-1);
        assertThat(e.windowCount()).isZero();
    }

    @Test
    void slowCallsLeaveTheWindowAfterItsSlices() {
        DeadlineEstimator e = new DeadlineEstimator(SETTINGS);
        for (int i = 0; i < 100; i++) {
            e.record(Duration.ofMillis(30).toNanos());
        }
        e.roll();
        assertThat(e.deadlineNanos() / 1e6).isCloseTo(45.0, Percentage.withPercentage(2));
        for (int slice = 1; slice < 10; slice++) {
            for (int i = 0; i < 100; i++) {
                e.record(Duration.ofMillis(1).toNanos());
            }
            e.roll();
            assertThat(e.deadlineNanos()).as("slice %d: the slow slice is still in the window", slice)
                    .isGreaterThan(Duration.ofMillis(40).toNanos());
        }
        for (int i = 0; i < 100; i++) {
            e.record(Duration.ofMillis(1).toNanos());
        }
        e.roll();
        assertThat(e.deadlineNanos()).as("the slow slice left the window").isEqualTo(Duration.ofMillis(5).toNanos());
        assertThat(e.windowCount()).isEqualTo(1000);
    }

    @Test
    void aFixedDeadlineNeverMovesButItsTailIsMeasured() {
        DeadlineEstimator e = new DeadlineEstimator(DeadlineEstimator.Settings.fixed(Duration.ofMillis(250)));
        for (int i = 0; i < 100; i++) {
            e.record(Duration.ofMillis(2).toNanos());
        }
        e.roll();
        assertThat(e.deadlineNanos()).isEqualTo(Duration.ofMillis(250).toNanos());
        assertThat(e.tailNanos()).isBetween(1_990_000L, 2_010_000L);
    }

    /**
     * Invariant, on a seeded heavy-tailed latency: calls that miss are recorded at their deadline
     * (censored), and still the deadline climbs above the true p99 — each slice with more than 1 %
     * misses raises it by the margin — and then misses stay rare, within the ceiling.
     */
    @Test
    void censoredMissesRaiseTheDeadlineUntilMissesAreRare() {
        DeadlineEstimator e = new DeadlineEstimator(new DeadlineEstimator.Settings(
                Duration.ofMillis(2), Duration.ofMillis(200), 0.99, 1.5, 10, 20));
        SplittableRandom random = new SplittableRandom(42);
        e.record(Duration.ofMillis(1).toNanos());
        int misses = 0;
        int calls = 0;
        for (int slice = 0; slice < 60; slice++) {
            if (slice == 0) {
                for (int i = 0; i < 100; i++) {
                    e.record(Duration.ofMillis(1).toNanos()); // a quiet start: the deadline drops to the floor
                }
                e.roll();
                assertThat(e.deadlineNanos()).isEqualTo(Duration.ofMillis(2).toNanos());
                continue;
            }
            for (int i = 0; i < 200; i++) {
                long latency = lognormalNanos(random); // median 3 ms, p99 ≈ 30 ms
                long deadline = e.deadlineNanos();
                boolean missed = latency > deadline;
                e.record(missed ? deadline : latency);
                if (slice >= 40) {
                    calls++;
                    misses += missed ? 1 : 0;
                }
            }
            e.roll();
        }
        assertThat(e.deadlineNanos()).isGreaterThan(Duration.ofMillis(30).toNanos()).isLessThanOrEqualTo(Duration.ofMillis(200).toNanos());
        assertThat((double) misses / calls).as("miss rate once settled").isLessThan(0.01);
    }

    @Test
    void settingsAreChecked() {
        assertThatThrownBy(() -> new DeadlineEstimator.Settings(Duration.ofMillis(10), Duration.ofMillis(5), 0.99, 1.5, 10, 20))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DeadlineEstimator.Settings(Duration.ZERO, Duration.ofMillis(5), 0.99, 1.5, 10, 20))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DeadlineEstimator.Settings(Duration.ofMillis(1), Duration.ofMillis(5), 1.5, 1.5, 10, 20))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new DeadlineEstimator.Settings(Duration.ofMillis(1), Duration.ofMillis(5), 0.99, 0.5, 10, 20))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** exp(N(ln 3 ms, 1)): p99 = 3 ms · e^2.33 ≈ 31 ms. */
    private static long lognormalNanos(SplittableRandom random) {
        double u1 = random.nextDouble();
        double u2 = random.nextDouble();
        double normal = Math.sqrt(-2 * Math.log(1 - u1)) * Math.cos(2 * Math.PI * u2);
        return (long) (Duration.ofMillis(3).toNanos() * Math.exp(normal));
    }
}
