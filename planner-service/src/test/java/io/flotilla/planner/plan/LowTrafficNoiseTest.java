package io.flotilla.planner.plan;

import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.support.Configs;
import io.flotilla.planner.support.PlannerSim;
import io.flotilla.planner.support.ShapeSim;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.SplittableRandom;

import static io.flotilla.planner.core.Pool.AGGREGATED;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Low traffic is Poisson noise the best forecast cannot beat: 0.5 requests/s seen through 5 s
 * intervals is 0, 1, 2, 5 … requests an interval. That noise must not read as a prediction error, or
 * the planner stays conservative (no scale-down) for as long as traffic is low, and a pool scaled up
 * for a burst never comes back down. Seeded Poisson counts, simulated clock.
 */
class LowTrafficNoiseTest {

    private static final Duration INTERVAL = Duration.ofSeconds(5);

    /** Defaults with 5 s intervals and the hold and cooldown scaled to them; {@code minRequests} as given. */
    private static PlannerConfig config(double minRequests) {
        return Configs.aggregated("interval", "5s", "cold-start.ready-time", "30s", "scaling.up-cooldown", "5s", "scaling.min-hold", "10s",
                "predictor.error-min-requests", Double.toString(minRequests));
    }

    /** Four replicas left from a burst, then 0.5 requests/s for 60 intervals (5 minutes); targets and conservative flags. */
    private static PlannerSim quietAfterBurst(PlannerConfig c, long seed, boolean[] conservative) {
        PlannerSim sim = new PlannerSim(c, PoolCounts.of(AGGREGATED, 4));
        SplittableRandom random = new SplittableRandom(seed);
        double seconds = INTERVAL.toMillis() / 1000.0;
        for (int i = 0; i < 60; i++) {
            sim.step(ShapeSim.poisson(random, 0.5 * seconds) / seconds, 2000, 64);
            conservative[i] = sim.last().conservative();
        }
        return sim;
    }

    @Test
    void poissonNoiseAtLowTrafficIsNotAPredictionErrorAndThePoolComesDown() {
        for (long seed = 1; seed <= 5; seed++) {
            boolean[] conservative = new boolean[60];
            PlannerSim sim = quietAfterBurst(config(10), seed, conservative);
            for (int i = 10; i < 60; i++) {
                assertThat(conservative[i]).as("seed %d, interval %d", seed, i).isFalse();
            }
            assertThat(sim.last().rateError()).as("seed %d", seed).isLessThan(0.5);
            assertThat(sim.targets().get(59).get(AGGREGATED)).as("seed %d: back to the minimum", seed).isEqualTo(1);
        }
    }

    /** Self-test: with a floor of 0.1 requests/s alone the same noise reads as forecasts running short, and holds the pool up. */
    @Test
    void withoutTheCountFloorTheSameNoiseReadsAsAPredictionError() {
        int conservativeIntervals = 0;
        for (long seed = 1; seed <= 5; seed++) {
            boolean[] conservative = new boolean[60];
            quietAfterBurst(config(0), seed, conservative);
            for (int i = 10; i < 60; i++) {
                conservativeIntervals += conservative[i] ? 1 : 0;
            }
        }
        assertThat(conservativeIntervals).isGreaterThan(0);
    }

    @Test
    void theRateFloorIsTheLargerOfTheRateAndTheCountFloor() {
        PlannerConfig.ErrorSettings e = new PlannerConfig.ErrorSettings(10, 0.1, 0.5, 10);
        assertThat(e.rateFloor(Duration.ofSeconds(5))).isEqualTo(2.0);
        assertThat(e.rateFloor(Duration.ofSeconds(30))).isEqualTo(10 / 30.0);
        assertThat(e.rateFloor(Duration.ofMinutes(10))).isEqualTo(0.1);
    }
}
