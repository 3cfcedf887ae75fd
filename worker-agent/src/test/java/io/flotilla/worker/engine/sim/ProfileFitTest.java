package io.flotilla.worker.engine.sim;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class ProfileFitTest {

    private static final double[] ISL = {128, 512, 2048, 8192};
    private static final double[] PREFILL_CONCURRENCY = {1, 2, 4};
    private static final double[] CONTEXT = {512, 2048, 8192};
    private static final double[] DECODE_CONCURRENCY = {1, 4, 16};
    private static final double KV_TOKENS = 131072;

    /** A profile whose points lie exactly on {@code truth}: TTFT alone is the prefill step, ITL the decode step. */
    private static String profileOf(TimingModel truth) {
        StringBuilder ttft = new StringBuilder();
        for (double isl : ISL) {
            ttft.append(ttft.isEmpty() ? "" : ",").append('[');
            for (int j = 0; j < PREFILL_CONCURRENCY.length; j++) {
                // more concurrency queues behind the others: not the prefill step alone, and not fitted
                ttft.append(j == 0 ? "" : ",").append(truth.prefillMs((long) isl) * (1 + j));
            }
            ttft.append(']');
        }
        StringBuilder itl = new StringBuilder();
        for (double context : CONTEXT) {
            itl.append(itl.isEmpty() ? "" : ",").append('[');
            for (int j = 0; j < DECODE_CONCURRENCY.length; j++) {
                itl.append(j == 0 ? "" : ",").append(truth.decodeMs(DECODE_CONCURRENCY[j] * context / KV_TOKENS));
            }
            itl.append(']');
        }
        return String.format(Locale.ROOT, """
                {"name": "measured", "kv_tokens": %d, "max_concurrency": 64,
                 "prefill": {"isl": [128, 512, 2048, 8192], "concurrency": [1, 2, 4], "ttft_ms": [%s]},
                 "decode": {"context": [512, 2048, 8192], "concurrency": [1, 4, 16], "itl_ms": [%s]}}
                """, (long) KV_TOKENS, ttft, itl);
    }

    @Test
    void recoversTheTimingModelBehindAnExactProfile() {
        TimingModel truth = new TimingModel(2e-6, 0.5, 12, 10, 20, 6);
        ProfileFit.Fit fit = ProfileFit.fit(profileOf(truth));

        assertThat(fit.prefillPoints()).isEqualTo(4);
        assertThat(fit.decodePoints()).isEqualTo(9);
        for (long t : new long[]{100, 1000, 4000, 8000}) {
            assertThat(fit.model().prefillMs(t)).as("prefill %d", t).isCloseTo(truth.prefillMs(t), within(1e-6 * truth.prefillMs(t) + 1e-6));
        }
        for (double u : new double[]{0, 0.25, 0.5, 1}) {
            assertThat(fit.model().decodeMs(u)).as("decode %s", u).isCloseTo(truth.decodeMs(u), within(1e-6));
        }
        assertThat(fit.prefillRmsMs()).isLessThan(1e-6);
        assertThat(fit.decodeRmsMs()).isLessThan(1e-6);
    }

    @Test
    void aProfileFileIsReadAsJsonAndAPropertiesFileAsBefore(@TempDir Path dir) throws IOException {
        TimingModel truth = new TimingModel(0, 0.25, 30, 0, 40, 8);
        Path json = Files.writeString(dir.resolve("profile.json"), profileOf(truth));
        assertThat(TimingModel.load(json).prefillMs(1000)).isCloseTo(280, within(1e-6));

        Path props = Files.writeString(dir.resolve("timing.properties"), "prefill.c=3\n");
        TimingModel loaded = TimingModel.load(props);
        assertThat(loaded.prefillC()).isEqualTo(3);
        assertThat(loaded.prefillB()).isEqualTo(TimingModel.DEFAULT.prefillB());
    }

    @Test
    void aProfileMissingATableOrWithARaggedRowIsRefusedByName() {
        assertThatThrownBy(() -> ProfileFit.fit("{\"kv_tokens\": 10, \"decode\": {}}"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'prefill'");
        assertThatThrownBy(() -> ProfileFit.fit("""
                {"kv_tokens": 1000, "prefill": {"isl": [1, 2], "concurrency": [1], "ttft_ms": [[1], [2, 3]]},
                 "decode": {"context": [1], "concurrency": [1], "itl_ms": [[1]]}}"""))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("row 1");
        assertThatThrownBy(() -> ProfileFit.fit("not json")).isInstanceOf(IllegalArgumentException.class);
    }
}
