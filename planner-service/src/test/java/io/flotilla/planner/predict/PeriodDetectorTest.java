package io.flotilla.planner.predict;

import io.flotilla.planner.support.ShapeSim;
import io.flotilla.planner.support.Shapes;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/**
 * The period detector on request rates counted over 5 s intervals (Poisson counts around each shape's
 * rate, 20 seeds each): it finds the period of the periodic shapes within one interval, once two
 * periods have been seen, and stays silent on every aperiodic one — at every point of the series, not
 * only at its end.
 */
class PeriodDetectorTest {

    private static final double DT = 5;

    private static PeriodDetector detector() {
        return new PeriodDetector(5, 24, 0.6, 3, DT);
    }

    /** Feeds {@code shape} (after {@code quiet} intervals without traffic) and returns the first period found, with when. */
    private static Optional<int[]> firstPeriod(List<ShapeSim.Phase> shape, long seed, int quiet) {
        PeriodDetector d = detector();
        SplittableRandom random = new SplittableRandom(seed);
        double total = shape.stream().mapToDouble(ShapeSim.Phase::seconds).sum();
        for (int i = 0; i < quiet + total / DT; i++) {
            double rate = i < quiet ? 0 : ShapeSim.rateAt(shape, (i - quiet + 0.5) * DT);
            d.observe(ShapeSim.poisson(random, rate * DT) / DT);
            if (d.period().isPresent()) {
                return Optional.of(new int[] {d.period().get().lag(), i - quiet});
            }
        }
        return Optional.empty();
    }

    @Test
    void findsThePeriodOfNoisyPeriodicTrafficOnceTwoPeriodsWereSeen() {
        for (String shape : List.of("recurring-50s", "recurring-100s", "diurnal")) {
            int period = shape.equals("recurring-50s") ? 10 : 20;
            for (long seed = 1; seed <= 20; seed++) {
                Optional<int[]> found = firstPeriod(Shapes.all().get(shape), seed, 6);
                assertThat(found).as("%s, seed %d", shape, seed).isPresent();
                assertThat(found.get()[0]).as("%s, seed %d: lag", shape, seed).isBetween(period - 1, period + 1);
                assertThat(found.get()[1]).as("%s, seed %d: found after", shape, seed).isBetween(2 * (period - 1), 2 * period + 8);
            }
        }
    }

    @Test
    void staysSilentOnAperiodicTraffic() {
        for (String shape : List.of("single-burst", "two-burst", "slow-ramp", "flash-crowd", "noisy-plateau")) {
            for (long seed = 1; seed <= 20; seed++) {
                assertThat(firstPeriod(Shapes.all().get(shape), seed, 6)).as("%s, seed %d", shape, seed).isEmpty();
            }
        }
    }

    @Test
    void staysSilentOnNoiseRandomWalksAndRamps() {
        SplittableRandom random = new SplittableRandom(7);
        PeriodDetector noise = detector();
        PeriodDetector walk = detector();
        PeriodDetector ramp = detector();
        double level = 5;
        for (int i = 0; i < 200; i++) {
            noise.observe(ShapeSim.poisson(random, 5 * DT) / DT);
            level = Math.max(0.5, level + (random.nextDouble() - 0.5));
            walk.observe(ShapeSim.poisson(random, level * DT) / DT);
            ramp.observe(ShapeSim.poisson(random, (0.5 + 0.05 * i) * DT) / DT);
            assertThat(noise.period()).as("white noise at %d", i).isEmpty();
            assertThat(walk.period()).as("random walk at %d", i).isEmpty();
            assertThat(ramp.period()).as("ramp at %d", i).isEmpty();
        }
    }

    @Test
    void theSeasonalForecastIsTheMeanOfThePastPeriodsAtThatPhase() {
        PeriodDetector d = new PeriodDetector(3, 10, 0.6, 2, DT);
        double[] cycle = {1, 1, 1, 9, 9, 1, 1, 1};
        for (int rep = 0; rep < 3; rep++) {
            for (double v : cycle) {
                d.observe(v * (rep == 2 ? 2 : 1)); // the last period twice as high
            }
        }
        assertThat(d.period()).map(PeriodDetector.Period::lag).contains(8);
        // Four steps ahead is the cycle's first 9: 18 one period before, 9 two periods before.
        assertThat(d.seasonal(4)).isCloseTo((18 + 9) / 2.0, within(1e-9));
        assertThat(d.seasonal(1)).isCloseTo((2 + 1) / 2.0, within(1e-9));
        assertThat(new PeriodDetector(3, 10, 0.6, 2, DT).seasonal(1)).isNaN();
    }

    @Test
    void theQuietBeforeTheFirstRequestIsNotHistory() {
        PeriodDetector d = detector();
        for (int i = 0; i < 50; i++) {
            d.observe(0);
        }
        assertThat(d.observations()).isZero();
        d.observe(2);
        d.observe(0);
        assertThat(d.observations()).isEqualTo(2);
    }
}
