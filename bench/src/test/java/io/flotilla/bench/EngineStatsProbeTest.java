package io.flotilla.bench;

import io.flotilla.bench.run.EngineCounts;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class EngineStatsProbeTest {

    @Test
    void countsAreDifferencesOverWorkersReadBothTimes() {
        var before = new EngineStatsProbe.Snapshot(10, 1, 0, Map.of(
                "worker-0", new double[] {5, 0, 1000, 200, 3000},
                "worker-1", new double[] {5, 1, 0, 400, 2000}));
        var after = new EngineStatsProbe.Snapshot(58, 2, 0, Map.of(
                "worker-0", new double[] {30, 0, 9000, 1200, 4000},
                "worker-1", new double[] {30, 1, 6000, 1400, 4500},
                "worker-2", new double[] {99, 9, 99, 99, 99})); // started during the run: not counted

        EngineCounts c = EngineStatsProbe.difference(before, after);

        assertThat(c.predicted()).isEqualTo(49);
        assertThat(c.exactShare()).isEqualTo(48.0 / 49);
        assertThat(c.engineRequests()).isEqualTo(50);
        assertThat(c.mirrorDisagree()).isZero();
        assertThat(c.evaluatedPerRequest()).isEqualTo(2000.0 / 50);
        assertThat(c.reusedShare()).isEqualTo(14_000.0 / 16_000);
        assertThat(c.workerCpuMs()).isEqualTo(3500);
    }

    @Test
    void noWorkerReadTwiceGivesUnknownEngineCounts() {
        var before = new EngineStatsProbe.Snapshot(0, 0, 0, Map.of());
        var after = new EngineStatsProbe.Snapshot(3, 0, 0, Map.of("worker-0", new double[] {1, 0, 1, 1, 1}));

        EngineCounts c = EngineStatsProbe.difference(before, after);

        assertThat(c.exactShare()).isEqualTo(1.0);
        assertThat(c.evaluatedPerRequest()).isNaN();
        assertThat(c.reusedShare()).isNaN();
        assertThat(c.workerCpuMs()).isNaN();
    }

    @Test
    void cpuTimeOfThisProcessIsReadable() {
        assertThat(EngineStatsProbe.cpuMs(Long.toString(ProcessHandle.current().pid()))).isPositive();
        assertThat(EngineStatsProbe.cpuMs(null)).isNaN();
        assertThat(EngineStatsProbe.cpuMs("999999999")).isNaN();
    }

    @Test
    void aWorkersManagementPortIsTheRecordedOneThePlannedOneOrUnknownInAFleet() {
        java.util.Properties state = new java.util.Properties();
        state.setProperty("worker-1.mgmt", "8101");
        assertThat(EngineStatsProbe.managementPort("worker-1", "127.0.0.1:7101", state)).hasValue(8101);
        assertThat(EngineStatsProbe.managementPort("worker-2", "127.0.0.1:7102", state)).hasValue(8102);
        assertThat(EngineStatsProbe.managementPort("worker-900", "127.0.0.1:41711", state)).as("a fleet's free port").isEmpty();
    }
}
