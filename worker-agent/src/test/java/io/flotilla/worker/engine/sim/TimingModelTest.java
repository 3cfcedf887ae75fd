package io.flotilla.worker.engine.sim;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class TimingModelTest {

    private final TimingModel model = TimingModel.DEFAULT;

    @Test
    void prefillIsAQuadraticInNewTokens() {
        assertThat(model.prefillMs(0)).isZero();
        assertThat(model.prefillMs(1)).isCloseTo(4.209989e-7 + 1.518344e-2 + 16.50142, within(1e-9));
        assertThat(model.prefillMs(1000)).isCloseTo(0.4209989 + 15.18344 + 16.50142, within(1e-9));
        assertThat(model.prefillMs(8192)).isCloseTo(4.209989e-7 * 8192 * 8192 + 1.518344e-2 * 8192 + 16.50142,
                within(1e-9));
    }

    @Test
    void decodeIsAQuadraticInKvUsageWithAFloor() {
        assertThat(model.decodeMs(0)).isCloseTo(5.74, within(1e-9));
        assertThat(model.decodeMs(0.5)).isCloseTo(-25.74 * 0.25 + 54.01 * 0.5 + 5.74, within(1e-9));
        assertThat(model.decodeMs(1)).isCloseTo(-25.74 + 54.01 + 5.74, within(1e-9));
        TimingModel negative = new TimingModel(0, 0, 0, 0, -10, 0);
        assertThat(negative.decodeMs(1)).isEqualTo(TimingModel.MIN_DECODE_MS);
    }

    @Test
    void aMixedStepCostsTheLargerOfPrefillAndDecode() {
        assertThat(model.stepMs(0, 0, 0)).isZero();
        assertThat(model.stepMs(100, 0, 0.9)).isEqualTo(model.prefillMs(100));
        assertThat(model.stepMs(0, 10, 0.9)).isEqualTo(model.decodeMs(0.9));
        assertThat(model.stepMs(100, 10, 0.9)).isEqualTo(Math.max(model.prefillMs(100), model.decodeMs(0.9)));
        assertThat(model.stepMs(4000, 10, 0.1)).isEqualTo(model.prefillMs(4000));
    }

    @Test
    void aProfileOverridesTheCoefficientsItNames(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("profile.properties");
        Files.writeString(file, "# measured on a test GPU\nprefill.c = 20\ndecode.b=1.5\n");

        TimingModel loaded = TimingModel.load(file);

        assertThat(loaded).isEqualTo(new TimingModel(4.209989e-7, 1.518344e-2, 20, -25.74, 1.5, 5.74));
    }

    @Test
    void aBadProfileValueIsRejectedWithItsKey(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("profile.properties");
        Files.writeString(file, "decode.a = fast\n");
        assertThatThrownBy(() -> TimingModel.load(file)).hasMessageContaining("decode.a");
    }
}
