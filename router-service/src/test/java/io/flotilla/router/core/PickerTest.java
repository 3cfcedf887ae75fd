package io.flotilla.router.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PickerTest {

    private static Candidate c(String id, long queuedPrefill, long decodeBlocks) {
        return new Candidate(Fixtures.worker(id), 0, 0, 0, queuedPrefill, queuedPrefill > 0 ? 1 : 0, decodeBlocks, 0);
    }

    @Test
    void temperatureZeroPicksTheMinimumCost() {
        List<Candidate> cs = List.of(c("a", 0, 0), c("b", 0, 0), c("c", 0, 0));
        assertThat(Picker.byCost(0, new Random(1)).pick(cs, new double[]{3, 1, 2})).isEqualTo(1);
    }

    @Test
    void equalCostsBreakTowardTheLeastLoadedThenTheSmallestId() {
        Picker p = Picker.byCost(0, new Random(1));
        List<Candidate> cs = List.of(c("a", 100, 10), c("b", 20, 10), c("c", 0, 30));
        assertThat(p.pick(cs, new double[]{5, 5, 5})).isEqualTo(1); // loadRank 110, 30, 30 → b (id before c)
        List<Candidate> same = List.of(c("z", 1, 1), c("y", 1, 1), c("x", 1, 1));
        assertThat(p.pick(same, new double[]{5, 5, 5})).isEqualTo(2);
        assertThat(p.pick(same, new double[]{5, 5 + 1e-12, 5})).as("within tie tolerance").isEqualTo(2);
    }

    @Test
    void softmaxSamplesInProportionToExpOfMinusNormalisedCost() {
        Picker p = Picker.byCost(1.0, new Random(42));
        List<Candidate> cs = List.of(c("a", 0, 0), c("b", 0, 0));
        double[] costs = {10, 110}; // normalised 0 and 1 → p(a) = 1 / (1 + e^-1) ≈ 0.731
        int a = 0;
        int n = 20_000;
        for (int i = 0; i < n; i++) {
            a += p.pick(cs, costs) == 0 ? 1 : 0;
        }
        assertThat((double) a / n).isCloseTo(1 / (1 + Math.exp(-1)), within(0.02));
    }

    @Test
    void softmaxIsReproducibleWithTheSameSeedAndNearGreedyAtLowTemperature() {
        List<Candidate> cs = List.of(c("a", 0, 0), c("b", 0, 0), c("c", 0, 0));
        double[] costs = {5, 1, 3};
        Picker one = Picker.byCost(0.5, new Random(7));
        Picker two = Picker.byCost(0.5, new Random(7));
        for (int i = 0; i < 100; i++) {
            assertThat(one.pick(cs, costs)).isEqualTo(two.pick(cs, costs));
        }
        Picker cold = Picker.byCost(0.01, new Random(7));
        for (int i = 0; i < 100; i++) {
            assertThat(cold.pick(cs, costs)).isEqualTo(1);
        }
    }

    @Test
    void roundRobinCyclesInCandidateOrderAndUniformCoversEveryone() {
        List<Candidate> cs = List.of(c("a", 0, 0), c("b", 0, 0), c("c", 0, 0));
        Picker rr = Picker.roundRobin();
        int[] picks = new int[6];
        for (int i = 0; i < picks.length; i++) {
            picks[i] = rr.pick(cs, new double[3]);
        }
        assertThat(picks).containsExactly(0, 1, 2, 0, 1, 2);
        Picker uniform = Picker.uniform(new Random(3));
        int[] seen = new int[3];
        for (int i = 0; i < 300; i++) {
            seen[uniform.pick(cs, new double[3])]++;
        }
        for (int count : seen) {
            assertThat(count).isBetween(70, 130);
        }
    }
}
