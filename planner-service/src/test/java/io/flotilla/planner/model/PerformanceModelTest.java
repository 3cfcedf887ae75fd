package io.flotilla.planner.model;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

/** The simulated engine's derived profile, interpolation, and throughput at latency targets. */
class PerformanceModelTest {

    private static final PerformanceModel MODEL = new PerformanceModel(SimulatedEngineProfile.create());

    @Test
    void timingModelOfTheSimulatedEngine() {
        assertThat(SimulatedEngineProfile.prefillMs(8192)).isCloseTo(4.209989e-7 * 8192 * 8192 + 1.518344e-2 * 8192 + 16.50142, within(1e-9));
        assertThat(SimulatedEngineProfile.decodeMs(0)).isCloseTo(5.74, within(1e-12));
        assertThat(SimulatedEngineProfile.decodeMs(1)).isCloseTo(-25.74 + 54.01 + 5.74, within(1e-12));
        // 16000 tokens of one request: a full 8192-token step and a 7808-token step.
        assertThat(SimulatedEngineProfile.ttftMs(16000, 1))
                .isCloseTo(SimulatedEngineProfile.prefillMs(8192) + SimulatedEngineProfile.prefillMs(7808), within(1e-9));
        // 64 sequences of 1024 tokens hold 64·64 of 8192 blocks: u = 0.5.
        assertThat(SimulatedEngineProfile.itlMs(1024, 64)).isCloseTo(SimulatedEngineProfile.decodeMs(0.5), within(1e-12));
    }

    @Test
    void gridPointsAreTheFormulaAndBetweenThemItInterpolates() {
        assertThat(MODEL.ttftMs(16384, 4)).isCloseTo(SimulatedEngineProfile.ttftMs(16384, 4), within(1e-9));
        assertThat(MODEL.itlMs(2048, 32)).isCloseTo(SimulatedEngineProfile.itlMs(2048, 32), within(1e-9));
        double between = MODEL.ttftMs(3072, 1);
        assertThat(between).isCloseTo((SimulatedEngineProfile.ttftMs(2048, 1) + SimulatedEngineProfile.ttftMs(4096, 1)) / 2, within(1e-9));
        assertThat(MODEL.ttftMs(10, 1)).isEqualTo(MODEL.ttftMs(128, 1)); // clamped below the grid
    }

    /**
     * An aggregated replica's decoding sequences wait for its prefill steps: where a prompt's prefill
     * (2000 tokens: ≈ 48 ms) is longer than the ITL target (30 ms), its decode is sized at a lower
     * decode-only ITL, at which the ITL the sequences see is the target; where it is shorter (50 ms
     * target), the decode-only capacity stands.
     */
    @Test
    void decodeBesidePrefillIsSizedAtTheItlItsSequencesSee() {
        double step = MODEL.ttftMs(2000, 1);
        assertThat(step).isBetween(30.0, 50.0);
        assertThat(MODEL.decodeCapacityBesidePrefill(2032, 50, 2000, 0.4)).isEqualTo(MODEL.decodeCapacity(2032, 50));
        assertThat(MODEL.decodeCapacityBesidePrefill(2032, 30, 2000, 0)).isEqualTo(MODEL.decodeCapacity(2032, 30));

        PerformanceModel.Capacity beside = MODEL.decodeCapacityBesidePrefill(2032, 30, 2000, 0.4);
        PerformanceModel.Capacity alone = MODEL.decodeCapacity(2032, 30);
        assertThat(beside.tokensPerSecond()).isLessThan(alone.tokensPerSecond());
        double prompts = 0.4 * MODEL.prefillPeakTokensPerSecond(2000);
        assertThat(MODEL.aggregatedItlMs(2032, beside.operatingPoint(), 2000, prompts)).isCloseTo(30, within(0.01));
        assertThat(MODEL.aggregatedItlMs(2032, alone.operatingPoint(), 2000, prompts)).isGreaterThan(31);
    }

    @Test
    void prefillThroughputAtTheTtftTarget() {
        // Peak: full 8192-token steps, ≈ 8192 / 169.1 ms ≈ 48 400 tokens/s, whatever the ISL.
        double peak = 8192 / SimulatedEngineProfile.prefillMs(8192) * 1000;
        for (double isl : new double[] {500, 4000}) {
            PerformanceModel.Capacity c = MODEL.prefillCapacity(isl, 1000);
            assertThat(c.targetMet()).isTrue();
            assertThat(c.latencyMs()).isCloseTo(1000, within(1e-6));
            assertThat(c.tokensPerSecond()).as("isl %s", isl).isBetween(0.95 * peak, peak);
        }
        // 16 000-token prompts: S = 330 ms, s = 330 ms per request → k = 2·670/330, ρ* = k/(1+k) ≈ 0.80.
        PerformanceModel.Capacity longPrompts = MODEL.prefillCapacity(16000, 1000);
        double s = MODEL.ttftMs(16000, 1); // interpolated between the 8192 and 16384 rows
        double service = 16000 / longPrompts.tokensPerSecond() * longPrompts.operatingPoint() * 1000;
        double k = 2 * (1000 - s) / service;
        assertThat(longPrompts.operatingPoint()).isCloseTo(k / (1 + k), within(1e-9)).isBetween(0.78, 0.82);
        assertThat(longPrompts.tokensPerSecond()).isBetween(0.78 * peak, 0.82 * peak);
        // A shorter target: lower utilisation, so more replicas for the same load.
        assertThat(MODEL.prefillCapacity(16000, 500).tokensPerSecond()).isLessThan(0.6 * peak);
        // A target shorter than one request's prefill: the utilisation floor, flagged.
        PerformanceModel.Capacity tight = MODEL.prefillCapacity(16000, 200);
        assertThat(tight.targetMet()).isFalse();
        assertThat(tight.operatingPoint()).isEqualTo(PerformanceModel.MIN_UTILISATION);
    }

    @Test
    void decodeThroughputIsKvBoundForLongContextsAndLatencyBoundForTightTargets() {
        PerformanceModel.Capacity kvBound = MODEL.decodeCapacity(1500, 50);
        assertThat(kvBound.operatingPoint()).isCloseTo(131072 / 1500.0, within(1e-9));
        assertThat(kvBound.tokensPerSecond()).isCloseTo(kvBound.operatingPoint() * 1000 / kvBound.latencyMs(), within(1e-6));
        PerformanceModel.Capacity tight = MODEL.decodeCapacity(1500, 20);
        assertThat(tight.latencyMs()).isLessThanOrEqualTo(20 + 1e-6);
        assertThat(tight.tokensPerSecond()).isLessThan(kvBound.tokensPerSecond());
        // Short contexts: bounded by the 256 running sequences.
        assertThat(MODEL.decodeCapacity(128, 50).operatingPoint()).isEqualTo(256);
    }

    @Test
    void speedupScalesLatencies() {
        PerformanceModel fast = new PerformanceModel(SimulatedEngineProfile.create(10));
        assertThat(fast.ttftMs(2048, 2)).isCloseTo(MODEL.ttftMs(2048, 2) / 10, within(1e-9));
        assertThat(fast.prefillCapacity(2000, 1000).tokensPerSecond()).isGreaterThan(9 * MODEL.prefillCapacity(2000, 1000).tokensPerSecond());
    }

    @Test
    void profileJsonRoundTrips() {
        PerformanceProfile p = SimulatedEngineProfile.create();
        PerformanceProfile back = ProfileJson.parse(ProfileJson.write(p));
        assertThat(back.name()).isEqualTo(p.name());
        assertThat(back.kvTokens()).isEqualTo(131072);
        assertThat(back.maxConcurrency()).isEqualTo(256);
        assertThat(back.prefillTtftMs().xs()).isEqualTo(p.prefillTtftMs().xs());
        assertThat(new PerformanceModel(back).ttftMs(16384, 4)).isCloseTo(MODEL.ttftMs(16384, 4), within(1e-3));
        assertThatThrownBy(() -> ProfileJson.parse("{\"name\": \"x\"}")).hasMessageContaining("prefill");
    }

    @Test
    void tablesRejectBadGrids() {
        assertThatThrownBy(() -> new Table2D(new double[] {2, 1}, new double[] {1}, new double[][] {{1}, {2}}))
                .hasMessageContaining("ascending");
        assertThatThrownBy(() -> new Table2D(new double[] {1}, new double[] {1, 2}, new double[][] {{1}}))
                .hasMessageContaining("values");
    }
}
