package io.flotilla.planner.profile;

import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.model.PerformanceProfile;
import io.flotilla.planner.model.SimulatedEngineProfile;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** Fitting a profile from sweep results (a fake load point answers with the simulated engine's latencies). */
class ProfileSweepTest {

    private static final double[] ISL = {512, 2048, 8192};
    private static final double[] PC = {1, 2, 4, 8};
    private static final double[] CTX = {1024, 4096};
    private static final double[] DC = {1, 8, 32};

    /** Answers every request of a point with the timing model's latency at that point. */
    private static final class SimulatedPoint implements LoadPoint {
        final List<int[]> points = new ArrayList<>();

        @Override
        public List<Measurement> run(int promptTokens, int maxTokens, int concurrency, int requests) {
            points.add(new int[] {promptTokens, maxTokens, concurrency, requests});
            Measurement m = maxTokens == 1
                    ? new Measurement(SimulatedEngineProfile.ttftMs(promptTokens, concurrency), 0, 1)
                    : new Measurement(1, SimulatedEngineProfile.itlMs(promptTokens, concurrency), maxTokens);
            return Collections.nCopies(requests, m);
        }
    }

    @Test
    void sweepsEveryPointAndFitsTheTables() {
        SimulatedPoint point = new SimulatedPoint();
        ProfileSweep sweep = new ProfileSweep(ISL, PC, CTX, DC, 32, 6, 1, 131072, 256);
        List<String> progress = new ArrayList<>();
        PerformanceProfile p = sweep.run("fake", point, progress::add);

        assertThat(point.points).hasSize(ISL.length * PC.length + CTX.length * DC.length);
        assertThat(point.points).filteredOn(x -> x[1] == 1).allSatisfy(x -> assertThat(x[3]).isEqualTo(Math.max(6, x[2])));
        assertThat(point.points).filteredOn(x -> x[1] != 1).allSatisfy(x -> assertThat(x[1]).isEqualTo(32));
        assertThat(progress).hasSize(point.points.size());
        PerformanceModel model = new PerformanceModel(p);
        for (double isl : ISL) {
            for (double c : PC) {
                assertThat(model.ttftMs(isl, c)).isCloseTo(SimulatedEngineProfile.ttftMs((long) isl, (long) c), within(1e-9));
            }
        }
        assertThat(model.itlMs(4096, 32)).isCloseTo(SimulatedEngineProfile.itlMs(4096, 32), within(1e-9));
        assertThat(p.kvTokens()).isEqualTo(131072);
    }

    @Test
    void fittedTablesNeverFallWithLoadAndConcurrencyIsPerReplica() {
        LoadPoint noisy = (promptTokens, maxTokens, concurrency, requests) -> {
            double ttft = concurrency == 4 ? 1 : 100.0 * concurrency; // a measurement dip at c = 4
            return Collections.nCopies(requests, new Measurement(ttft, 10, maxTokens));
        };
        PerformanceProfile p = new ProfileSweep(ISL, PC, CTX, DC, 16, 4, 2, 1000, 8).run("noisy", noisy, s -> { });
        double[] row = p.prefillTtftMs().values()[0];
        for (int j = 1; j < row.length; j++) {
            assertThat(row[j]).isGreaterThanOrEqualTo(row[j - 1]);
        }
        assertThat(p.prefillTtftMs().ys()).containsExactly(0.5, 1, 2, 4); // 2 replicas served the sweep
    }

    @Test
    void percentileIgnoresMissingMeasurements() {
        assertThat(ProfileSweep.p90(new double[] {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, Double.NaN})).isEqualTo(9);
        assertThat(ProfileSweep.p90(new double[] {Double.NaN})).isNaN();
    }
}
