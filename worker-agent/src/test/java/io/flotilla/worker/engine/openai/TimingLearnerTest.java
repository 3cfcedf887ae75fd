package io.flotilla.worker.engine.openai;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TimingLearnerTest {

    @Test
    void fitsPrefillAndDecodeLinesFromCleanSamplesOnly() {
        TimingLearner l = new TimingLearner(16, 4);
        for (int i = 1; i <= 4; i++) {
            int tokens = 100 * i;
            l.accept(new TimingLearner.Sample(tokens, 5 + 0.02 * tokens, true, 10, 8 + 4 * (i / 4.0), i / 4.0));
        }
        assertThat(l.estimate()).hasValueSatisfying(t -> {
            assertThat(t.prefillB()).isCloseTo(0.02, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(t.prefillC()).isCloseTo(5, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(t.decodeD1()).isCloseTo(4, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(t.decodeD0()).isCloseTo(8, org.assertj.core.data.Offset.offset(1e-9));
            assertThat(t.prefillA()).isZero();
        });
        l.accept(new TimingLearner.Sample(5000, 9999, false, 1, 0, 0.5));
        assertThat(l.samples()).as("a queued request does not time prefill; one token does not time decode")
                .containsExactly(4, 4);
    }

    @Test
    void noEstimateBeforeEnoughSamplesAndOldSamplesLeaveTheWindow() {
        TimingLearner l = new TimingLearner(4, 3);
        l.accept(new TimingLearner.Sample(100, 10, true, 5, 10, 0.1));
        l.accept(new TimingLearner.Sample(200, 20, true, 5, 10, 0.2));
        assertThat(l.estimate()).isEmpty();
        for (int i = 0; i < 6; i++) {
            l.accept(new TimingLearner.Sample(100 + i, 50, true, 5, 20, 0.1 * i));
        }
        assertThat(l.samples()).containsExactly(4, 4);
        assertThat(l.estimate()).hasValueSatisfying(t -> assertThat(t.prefillC() + t.prefillB() * 102).isCloseTo(50,
                org.assertj.core.data.Offset.offset(1e-6)));
    }

    @Test
    void aNegativeSlopeFallsBackToTheMean() {
        TimingLearner l = new TimingLearner(8, 2);
        l.accept(new TimingLearner.Sample(100, 30, true, 3, 12, 0.1));
        l.accept(new TimingLearner.Sample(200, 10, true, 3, 8, 0.9));
        assertThat(l.estimate()).hasValueSatisfying(t -> {
            assertThat(t.prefillB()).isZero();
            assertThat(t.prefillC()).isEqualTo(20);
            assertThat(t.decodeD1()).isZero();
            assertThat(t.decodeD0()).isEqualTo(10);
        });
    }
}
