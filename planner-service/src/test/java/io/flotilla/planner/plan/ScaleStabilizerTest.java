package io.flotilla.planner.plan;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** The down rule on a real timer's instants: 5 s intervals that come 10 ms early. */
class ScaleStabilizerTest {

    private static final PlannerConfig.Limits LIMITS = new PlannerConfig.Limits(1, 8, 1);
    private static final PlannerConfig.Scaling SCALING = new PlannerConfig.Scaling(1.0, 0.8, Duration.ofSeconds(5),
            Duration.ofSeconds(10), Duration.ofSeconds(15), 1, Duration.ofMinutes(5), Duration.ofMinutes(10), 0.95);

    /** Targets after each of {@code needs}, starting at 4 replicas, decided every 4.99 s. */
    private static List<Integer> run(double... needs) {
        ScaleStabilizer stabilizer = new ScaleStabilizer(SCALING, Duration.ofSeconds(5));
        ScaleStabilizer.State st = new ScaleStabilizer.State();
        st.target = 4;
        Instant now = Instant.parse("2026-01-01T00:00:00Z");
        List<Integer> targets = new ArrayList<>();
        for (double need : needs) {
            now = now.plusMillis(4990);
            int desired = Math.max(LIMITS.min(), (int) Math.ceil(need));
            targets.add(stabilizer.step(st, LIMITS, need, desired, now, false, false).target());
        }
        return targets;
    }

    @Test
    void afterTheStableTimeEachStepWaitsOnlyForTheCooldownAndJitterCostsNoInterval() {
        // Low from the first decision: the window spans 15 s at the fourth (3 × 4.99 s, within half an
        // interval), then one replica per 10 s cooldown (two intervals).
        assertThat(run(0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3))
                .containsExactly(4, 4, 4, 3, 3, 2, 2, 1, 1, 1);
    }

    @Test
    void aNeedAboveTheThresholdWithinTheWindowHoldsTheStep() {
        // At 3 replicas the threshold is 1.6: the 2.0 seen two intervals before blocks 3 → 2 until it
        // has left the 15 s window.
        assertThat(run(0.3, 0.3, 0.3, 0.3, 2.0, 0.3, 0.3, 0.3, 0.3, 0.3))
                .containsExactly(4, 4, 4, 3, 3, 3, 3, 3, 2, 2);
    }
}
