package io.flotilla.planner.plan;

import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.support.Configs;
import io.flotilla.planner.support.ShapeSim;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LoadForecast#rise}: the fastest rise within a span, less its Poisson noise, remembered for
 * {@code scaling.rise-memory}. Seeded Poisson counts at 5 s intervals.
 */
class RiseReserveTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static double[] feed(LoadForecast f, double[] rates, long seed, int span) {
        SplittableRandom random = new SplittableRandom(seed);
        double[] rises = new double[rates.length];
        for (int i = 0; i < rates.length; i++) {
            Instant at = T0.plusSeconds(5L * (i + 1));
            double observed = ShapeSim.poisson(random, rates[i] * 5) / 5.0;
            f.learn(Observation.load(at, 5, observed, 2000, 64, PoolCounts.of(Pool.AGGREGATED, 1)));
            rises[i] = f.rise(span, at);
        }
        return rises;
    }

    private static double[] ramp(double flatBefore, double from, double to, int rampIntervals, int after) {
        double[] r = new double[(int) flatBefore + rampIntervals + after];
        for (int i = 0; i < r.length; i++) {
            int k = i - (int) flatBefore;
            r[i] = k < 0 ? from : k < rampIntervals ? from + (to - from) * k / rampIntervals : 2;
        }
        return r;
    }

    @Test
    void aFlatNoisyLoadShowsNoRise() {
        for (long seed = 1; seed <= 10; seed++) {
            LoadForecast f = new LoadForecast(Configs.aggregated("interval", "5s", "scaling.rise-memory", "10m"));
            double[] flat = new double[120];
            java.util.Arrays.fill(flat, 8);
            double[] rises = feed(f, flat, seed, 3);
            // 2σ of the difference of two 15 s means at 8 req/s is 2.1 req/s: what is left of the largest of 114
            // differences after it is a fraction of one replica's 3 req/s, where the ramp below shows 1-4 req/s.
            System.out.printf("seed %d: largest rise of a flat 8 req/s over 10 min %.2f req/s%n", seed, rises[rises.length - 1]);
            assertThat(rises[rises.length - 1]).as("seed %d", seed).isLessThan(1.5);
        }
    }

    @Test
    void aRampReadsAsItsSlopeOverTheSpanAndIsRememberedForTheMemory() {
        // 1 → 8 req/s over 40 s (8 intervals): 2.6 req/s per 15 s; then 2 req/s.
        LoadForecast f = new LoadForecast(Configs.aggregated("interval", "5s", "scaling.rise-memory", "100s"));
        double[] rates = ramp(10, 1, 8, 8, 40);
        double[] rises = feed(f, rates, 7, 3);
        int rampEnd = 10 + 8;
        assertThat(rises[rampEnd]).isBetween(0.8, 4.0);
        assertThat(rises[rampEnd + 10]).as("within 100 s").isEqualTo(rises[rampEnd]);
        assertThat(rises[rises.length - 1]).as("forgotten after 100 s").isLessThan(1.0);
    }

    @Test
    void offByDefault() {
        LoadForecast f = new LoadForecast(Configs.aggregated("interval", "5s"));
        assertThat(feed(f, ramp(10, 1, 8, 8, 10), 7, 3)).containsOnly(0.0);
    }

    @Test
    void aNegativeMemoryIsRejectedWithItsName() {
        assertThatThrownBy(() -> Configs.aggregated("scaling.rise-replicas", "-1")).hasStackTraceContaining("rise-replicas");
    }
}
