package io.flotilla.planner.predict;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** Each predictor on literal series: constant, linear trend, seasonal. */
class PredictorsTest {

    private static void feed(LoadPredictor p, double... series) {
        for (double y : series) {
            p.observe(y);
        }
    }

    @Test
    void nothingObservedPredictsNaN() {
        for (String kind : new String[] {"constant", "moving-average", "holt", "holt-winters"}) {
            assertThat(new PredictorSettings(kind, 5, 5, 0.5, 0.2, 0.3, 0.8, 120).create().predict(1)).as(kind).isNaN();
        }
    }

    @Test
    void constantRepeatsTheLastValue() {
        ConstantPredictor p = new ConstantPredictor();
        feed(p, 3, 5, 7);
        assertThat(p.predict(1)).isEqualTo(7);
        assertThat(p.predict(10)).isEqualTo(7);
    }

    @Test
    void movingAverageAveragesTheWindow() {
        MovingAveragePredictor p = new MovingAveragePredictor(3);
        feed(p, 1, 2);
        assertThat(p.predict(1)).isEqualTo(1.5);
        feed(p, 3, 4, 5);
        assertThat(p.predict(1)).isEqualTo(4);
        assertThat(p.predict(5)).isEqualTo(4);
    }

    @Test
    void everyPredictorKeepsAConstantSeries() {
        for (String kind : new String[] {"constant", "moving-average", "holt", "holt-winters"}) {
            LoadPredictor p = new PredictorSettings(kind, 0, 4, 0.5, 0.3, 0.3, 0.8, 4).create();
            for (int i = 0; i < 20; i++) {
                p.observe(12.5);
            }
            assertThat(p.predict(1)).as(kind).isCloseTo(12.5, within(1e-9));
            assertThat(p.predict(7)).as(kind).isCloseTo(12.5, within(1e-9));
        }
    }

    @Test
    void holtFollowsALinearTrendExactly() {
        HoltPredictor p = new HoltPredictor(0.5, 0.3);
        for (int t = 0; t < 10; t++) {
            p.observe(10 + 2 * t); // 10, 12, …, 28
        }
        assertThat(p.predict(1)).isCloseTo(30, within(1e-9));
        assertThat(p.predict(3)).isCloseTo(34, within(1e-9));
    }

    @Test
    void dampedHoltLevelsOffAndNeverGoesNegative() {
        HoltPredictor damped = new HoltPredictor(0.5, 0.3, 0.8);
        HoltPredictor classic = new HoltPredictor(0.5, 0.3);
        for (int t = 0; t < 10; t++) {
            damped.observe(10 + 2 * t);
            classic.observe(10 + 2 * t);
        }
        assertThat(damped.predict(1)).isGreaterThan(26).isLessThan(30);
        assertThat(damped.predict(1000) - damped.predict(100)).isLessThan(1e-6); // φ^h vanishes: it levels off
        assertThat(damped.predict(100)).isLessThan(classic.predict(100));
        HoltPredictor falling = new HoltPredictor(0.5, 0.3);
        feed(falling, 10, 8, 6, 4, 2, 0);
        assertThat(falling.predict(5)).isZero();
    }

    @Test
    void aLevelDrivenBelowZeroByASuddenDropRestartsAtZeroWithoutTrend() {
        HoltPredictor p = new HoltPredictor(0.5, 0.2, 0.8);
        feed(p, 20, 20, 20, 6, 0.5, 0.5, 0.5);
        // ℓ, b: (13, −1.4), (6.19, −2.258), (2.442, −2.195), (0.593, −1.774): the momentum of the drop
        assertThat(p.predict(1)).isZero();
        p.observe(0.5);                // 0.25 + 0.5·(0.593 − 0.8·1.774) < 0 → ℓ = 0, b = 0
        assertThat(p.predict(1)).isZero();
        p.observe(0.5);                // ℓ = 0.25, b = 0.2·0.25 = 0.05: recovers at once
        assertThat(p.predict(1)).isCloseTo(0.25 + 0.8 * 0.05, within(1e-9));
    }

    @Test
    void holtWintersRepeatsAPeriodicSeries() {
        HoltWintersPredictor p = new HoltWintersPredictor(0.5, 0.3, 0.3, 4);
        for (int rep = 0; rep < 3; rep++) {
            feed(p, 10, 20, 30, 20);
        }
        assertThat(p.predict(1)).isCloseTo(10, within(1e-9));
        assertThat(p.predict(2)).isCloseTo(20, within(1e-9));
        assertThat(p.predict(3)).isCloseTo(30, within(1e-9));
        assertThat(p.predict(4)).isCloseTo(20, within(1e-9));
        assertThat(p.predict(7)).isCloseTo(30, within(1e-9));
    }

    @Test
    void holtWintersTracksSeasonOnTopOfATrend() {
        double[] season = {-8, 0, 8, 0};
        HoltWintersPredictor p = new HoltWintersPredictor(0.5, 0.3, 0.3, 4);
        int t = 0;
        for (; t < 40; t++) {
            p.observe(100 + t + season[t % 4]);
        }
        for (int h = 1; h <= 4; h++) {
            double actual = 100 + (t - 1 + h) + season[(t - 1 + h) % 4];
            assertThat(p.predict(h)).as("h=%d", h).isCloseTo(actual, within(0.05 * actual));
        }
        // The same series fools a season-blind predictor by the amplitude.
        HoltPredictor holt = new HoltPredictor(0.5, 0.3);
        for (int i = 0; i < 40; i++) {
            holt.observe(100 + i + season[i % 4]);
        }
        double next = 100 + 40 + season[0];
        assertThat(Math.abs(holt.predict(1) - next)).isGreaterThan(Math.abs(p.predict(1) - next));
    }

    @Test
    void holtWintersForecastsTheLastValueDuringItsFirstSeason() {
        HoltWintersPredictor p = new HoltWintersPredictor(0.5, 0.3, 0.3, 4);
        feed(p, 5, 9);
        assertThat(p.predict(3)).isEqualTo(9);
    }

    @Test
    void warmupForecastsConstantUntilEnoughObservations() {
        WarmupPredictor p = new WarmupPredictor(new HoltPredictor(0.5, 0.3), 5);
        feed(p, 1, 2, 3, 4);
        assertThat(p.warmingUp()).isTrue();
        assertThat(p.predict(3)).isEqualTo(4);
        assertThat(p.name()).startsWith("constant");
        p.observe(5);
        assertThat(p.warmingUp()).isFalse();
        assertThat(p.predict(3)).isCloseTo(8, within(1e-9));
    }

    @Test
    void settingsValidate() {
        assertThatThrownBy(() -> new PredictorSettings("arima", 5, 5, 0.5, 0.2, 0.3, 0.8, 120).create())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("arima");
        assertThatThrownBy(() -> new HoltPredictor(0, 0.3)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new HoltWintersPredictor(0.5, 0.3, 0.3, 1)).isInstanceOf(IllegalArgumentException.class);
    }
}
