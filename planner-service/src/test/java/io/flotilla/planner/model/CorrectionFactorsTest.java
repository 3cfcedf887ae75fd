package io.flotilla.planner.model;

import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.PoolCounts;
import org.junit.jupiter.api.Test;

import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class CorrectionFactorsTest {

    private static final PerformanceModel MODEL = new PerformanceModel(SimulatedEngineProfile.create());

    private static Observation measured(double ttftP90, double itlP90, long samples) {
        return Observation.load(Instant.EPOCH, 30, 2, 2048, 256, PoolCounts.NONE).withLatency(ttftP90, itlP90, samples, 4, 16);
    }

    @Test
    void factorIsSmoothedObservedOverExpected() {
        CorrectionFactors f = new CorrectionFactors(0.5, 2, 1.0, 10);
        double expectedTtft = MODEL.ttftMs(2048, 4);
        double expectedItl = MODEL.itlMs(2048 + 128, 16);
        f.update(measured(1.5 * expectedTtft, 0.8 * expectedItl, 50), MODEL);
        assertThat(f.prefill()).isCloseTo(1.5, within(1e-9));
        assertThat(f.decode()).isCloseTo(0.8, within(1e-9));

        CorrectionFactors smooth = new CorrectionFactors(0.5, 2, 0.5, 10);
        smooth.update(measured(1.5 * expectedTtft, expectedItl, 50), MODEL);
        assertThat(smooth.prefill()).isCloseTo(1.25, within(1e-9));
    }

    @Test
    void factorsAreBoundedAndNeedEnoughSamples() {
        CorrectionFactors f = new CorrectionFactors(0.5, 2, 1.0, 10);
        f.update(measured(1e6, 1e6, 5), MODEL);
        assertThat(f.prefill()).isEqualTo(1);
        f.update(measured(1e6, 1e-3, 50), MODEL);
        assertThat(f.prefill()).isEqualTo(2);
        assertThat(f.decode()).isEqualTo(0.5);
    }
}
