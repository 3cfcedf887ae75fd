package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.support.PlannerSim;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.DoubleRange;
import net.jqwik.api.constraints.LongRange;

import io.flotilla.planner.predict.PredictorSettings;

import java.time.Duration;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant "a noisy flat load never makes a pool oscillate": ±15 % uniform noise around a level, for
 * 100 minutes; after the first 5 minutes the target never reverses direction (up then down, or down
 * then up). Seeded, so every run checks the same cases.
 */
class NoisyLoadPropertyTest {

    @Property(tries = 30, seed = "20261129")
    void noisyFlatLoadDoesNotOscillate(@ForAll @LongRange(min = 1, max = 1_000_000) long seed,
                                       @ForAll @DoubleRange(min = 1, max = 40) double level,
                                       @ForAll boolean disaggregated) {
        PlannerConfig config = PlannerConfig.defaults("m", disaggregated);
        for (Pool p : config.pools()) {
            List<Integer> settled = run(config, seed, level).series(p).subList(10, 200);
            assertThat(reversals(settled)).as("%s: %s", p, settled).isZero();
        }
    }

    /** Self-test: the same check fails a planner without hysteresis, stable time or cooldowns. */
    @Example
    void theCheckCatchesAPlannerWithoutHysteresis() {
        PlannerConfig.Scaling none = new PlannerConfig.Scaling(1.0, 1.0, Duration.ZERO, Duration.ZERO, Duration.ZERO, 8,
                Duration.ofHours(1), Duration.ofMinutes(10), 2.0);
        PlannerConfig flappy = PlannerConfig.defaults("m", false).withScaling(none)
                .withPredictor(PredictorSettings.defaults().withTrend(0.3, 1.0));
        int total = 0;
        for (long seed = 1; seed <= 5; seed++) {
            total += reversals(run(flappy, seed, 10).series(Pool.AGGREGATED).subList(10, 200));
        }
        assertThat(total).isGreaterThan(0);
    }

    private static PlannerSim run(PlannerConfig config, long seed, double level) {
        boolean disaggregated = config.pools().contains(Pool.DECODE);
        PlannerSim sim = new PlannerSim(config, disaggregated ? PoolCounts.of(Pool.PREFILL, 1, Pool.DECODE, 1)
                : PoolCounts.of(Pool.AGGREGATED, 1));
        SplittableRandom noise = new SplittableRandom(seed);
        for (int i = 0; i < 200; i++) {
            sim.step(level * (1 + 0.3 * (noise.nextDouble() - 0.5)), 4000, 400);
        }
        return sim;
    }

    static int reversals(List<Integer> series) {
        int direction = 0;
        int reversals = 0;
        for (int i = 1; i < series.size(); i++) {
            int d = Integer.signum(series.get(i) - series.get(i - 1));
            if (d != 0) {
                if (direction != 0 && d != direction) {
                    reversals++;
                }
                direction = d;
            }
        }
        return reversals;
    }
}
