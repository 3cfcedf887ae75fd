package io.flotilla.planner.plan;

import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.model.SimulatedEngineProfile;
import io.flotilla.planner.support.Configs;
import io.flotilla.planner.support.ShapeSim;
import io.flotilla.planner.support.Shapes;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * {@link LoadForecast#rise}: the fastest rise within a span, less its Poisson noise, remembered for
 * {@code scaling.rise-memory} or, unset, {@code scaling.rise-memory-cold-starts} cold starts. Seeded Poisson counts at
 * 5 s intervals; the planner's runs on a simulated clock ({@link ShapeSim}).
 */
class RiseReserveTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    private static final PerformanceModel MODEL = new PerformanceModel(SimulatedEngineProfile.create(0.25));

    private static double[] feed(LoadForecast f, Duration memory, double[] rates, long seed, int span) {
        SplittableRandom random = new SplittableRandom(seed);
        double[] rises = new double[rates.length];
        for (int i = 0; i < rates.length; i++) {
            Instant at = T0.plusSeconds(5L * (i + 1));
            double observed = ShapeSim.poisson(random, rates[i] * 5) / 5.0;
            f.learn(Observation.load(at, 5, observed, 2000, 64, PoolCounts.of(Pool.AGGREGATED, 1)));
            rises[i] = f.rise(span, memory, at);
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
            LoadForecast f = new LoadForecast(Configs.aggregated("interval", "5s"));
            double[] flat = new double[120];
            java.util.Arrays.fill(flat, 8);
            double[] rises = feed(f, Duration.ofMinutes(10), flat, seed, 3);
            // 2σ of the difference of two 15 s means at 8 req/s is 2.1 req/s: what is left of the largest of 114
            // differences after it is a fraction of one replica's 3 req/s, where the ramp below shows 1-4 req/s.
            System.out.printf("seed %d: largest rise of a flat 8 req/s over 10 min %.2f req/s%n", seed, rises[rises.length - 1]);
            assertThat(rises[rises.length - 1]).as("seed %d", seed).isLessThan(1.5);
        }
    }

    @Test
    void aRampReadsAsItsSlopeOverTheSpanAndIsRememberedForTheMemory() {
        // 1 → 8 req/s over 40 s (8 intervals): 2.6 req/s per 15 s; then 2 req/s.
        LoadForecast f = new LoadForecast(Configs.aggregated("interval", "5s"));
        double[] rates = ramp(10, 1, 8, 8, 40);
        double[] rises = feed(f, Duration.ofSeconds(100), rates, 7, 3);
        int rampEnd = 10 + 8;
        assertThat(rises[rampEnd]).isBetween(0.8, 4.0);
        assertThat(rises[rampEnd + 10]).as("within 100 s").isEqualTo(rises[rampEnd]);
        assertThat(rises[rises.length - 1]).as("forgotten after 100 s").isLessThan(1.0);
    }

    @Test
    void aZeroMemoryKeepsNoRise() {
        LoadForecast f = new LoadForecast(Configs.aggregated("interval", "5s"));
        assertThat(feed(f, Duration.ZERO, ramp(10, 1, 8, 8, 10), 7, 3)).containsOnly(0.0);
    }

    /** Unset, the memory is five cold starts; a fixed one, 0s (off) included, replaces them whatever the cold start. */
    @Test
    void theMemoryIsFiveColdStartsUnlessSetAsADuration() {
        PlannerConfig.RiseReserve defaults = Configs.aggregated().scaling().rise();
        assertThat(defaults).isEqualTo(new PlannerConfig.RiseReserve(null, 5, 1));
        assertThat(defaults.memoryAt(Duration.ofSeconds(120))).isEqualTo(Duration.ofMinutes(10));
        assertThat(defaults.memoryAt(Duration.ofSeconds(15))).isEqualTo(Duration.ofSeconds(75));
        assertThat(Configs.aggregated("scaling.rise-memory-cold-starts", "2.5").scaling().rise().memoryAt(Duration.ofSeconds(30)))
                .isEqualTo(Duration.ofSeconds(75));
        for (String fixed : new String[] {"0s", "150s"}) {
            PlannerConfig.RiseReserve set = Configs.aggregated("scaling.rise-memory", fixed).scaling().rise();
            assertThat(List.of(set.memoryAt(Duration.ofSeconds(10)), set.memoryAt(Duration.ofSeconds(120))))
                    .containsOnly(Duration.parse("PT" + fixed.toUpperCase()));
        }
        assertThat(Configs.aggregated("scaling.rise-memory-cold-starts", "0").scaling().rise().memoryAt(Duration.ofSeconds(120)))
                .isZero();
    }

    /**
     * A memory in cold starts follows the cold start the planner measures (from its decision to the interval that sees
     * the replica READY: the simulated start plus an interval). On flash-crowd (1 → 9 req/s in 5 s, then 1 req/s), four
     * cold starts remember the rise exactly as a fixed memory of four measured starts does — 60 s with 10 s starts,
     * 100 s with 20 s starts — and {@code rise-memory=0s} keeps none.
     */
    @Test
    void aMemoryInColdStartsFollowsTheMeasuredColdStart() {
        for (int cold : new int[] {2, 4}) {
            List<ScalingDecision> starts = flashCrowd(cold, "scaling.rise-memory-cold-starts", "4").decisions();
            Duration measured = starts.get(starts.size() - 1).readyTime();
            assertThat(measured).as("measured cold start").isEqualTo(Duration.ofSeconds((cold + 1) * 5L));
            List<ScalingDecision> fixed = flashCrowd(cold, "scaling.rise-memory", measured.multipliedBy(4).toSeconds() + "s").decisions();
            System.out.printf("cold start %d s: measured %d s, reserve from interval %d to %d%n", cold * 5, measured.toSeconds(),
                    firstWithReserve(starts), lastWithReserve(starts));
            assertThat(reserves(starts)).as("cold start %d s", cold * 5).isEqualTo(reserves(fixed)).contains(0.0);
            assertThat(lastWithReserve(starts)).isLessThan(starts.size() - 1);
        }
        assertThat(lastWithReserve(flashCrowd(4, "scaling.rise-memory-cold-starts", "4").decisions()))
                .as("kept longer with longer starts").isGreaterThan(lastWithReserve(flashCrowd(2, "scaling.rise-memory-cold-starts", "4").decisions()));
        assertThat(reserves(flashCrowd(2, "scaling.rise-memory", "0s").decisions())).containsOnly(0.0);
    }

    private static List<Double> reserves(List<ScalingDecision> d) {
        return d.stream().map(ScalingDecision::riseReserve).toList();
    }

    private static ShapeSim.Result flashCrowd(int cold, String... settings) {
        List<String> all = new ArrayList<>(Configs.EVALUATION);
        all.addAll(List.of(settings));
        ShapeSim sim = new ShapeSim(Configs.aggregated(all.toArray(String[]::new)), MODEL, cold, 1);
        return sim.run(Shapes.all().get("flash-crowd"), 2000, 64, 6, 0, 4);
    }

    private static int firstWithReserve(List<ScalingDecision> d) {
        for (int i = 0; i < d.size(); i++) {
            if (d.get(i).riseReserve() > 0) {
                return i;
            }
        }
        return -1;
    }

    private static int lastWithReserve(List<ScalingDecision> d) {
        for (int i = d.size() - 1; i >= 0; i--) {
            if (d.get(i).riseReserve() > 0) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void aNegativeMemoryIsRejectedWithItsName() {
        assertThatThrownBy(() -> Configs.aggregated("scaling.rise-replicas", "-1")).hasStackTraceContaining("rise-replicas");
    }
}
