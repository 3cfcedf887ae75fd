package io.flotilla.planner.predict;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class PredictionErrorTest {

    @Test
    void perfectForecastsScoreZero() {
        PredictionError e = new PredictionError(5, 0.1);
        for (int i = 0; i < 8; i++) {
            e.record(10, 10);
        }
        assertThat(e.value()).isZero();
    }

    @Test
    void symmetricPercentageErrorOverTheWindow() {
        PredictionError e = new PredictionError(2, 0.1);
        e.record(10, 5);              // 5 / 7.5
        assertThat(e.value()).isCloseTo(2.0 / 3, within(1e-12));
        e.record(10, 10);             // 0
        assertThat(e.value()).isCloseTo(1.0 / 3, within(1e-12));
        e.record(10, 10);             // the first error left the window
        assertThat(e.value()).isZero();
        assertThat(e.scored()).isEqualTo(2);
    }

    @Test
    void floorKeepsNearZeroTrafficFromReadingAsHugeError() {
        PredictionError e = new PredictionError(3, 0.1);
        e.record(0.01, 0);
        assertThat(e.value()).isCloseTo(0.1, within(1e-12)); // 0.01 / max(0.005, 0.1)
        e.record(Double.NaN, 3);      // no forecast yet: not scored
        assertThat(e.scored()).isEqualTo(1);
        e.record(5, 0);
        assertThat(e.value()).isLessThanOrEqualTo(2);
    }

    @Test
    void shortfallCountsOnlyForecastsBelowWhatCame() {
        PredictionError e = new PredictionError(4, 0.1);
        e.record(10, 2);              // over-forecast: 8 / 6 in the sMAPE, nothing in the shortfall
        assertThat(e.shortfall()).isZero();
        assertThat(e.value()).isCloseTo(4.0 / 3, within(1e-12));
        e.record(2, 10);              // under-forecast: 8 / 6 in both
        assertThat(e.shortfall()).isCloseTo(2.0 / 3, within(1e-12));
        assertThat(e.value()).isCloseTo(4.0 / 3, within(1e-12));
        e.record(0, 1);               // 1 / max(0.5, 0.1) = 2
        e.record(5, 5);
        e.record(5, 5);               // the over-forecast left the window
        assertThat(e.shortfall()).isCloseTo((4.0 / 3 + 2) / 4, within(1e-12));
    }
}
