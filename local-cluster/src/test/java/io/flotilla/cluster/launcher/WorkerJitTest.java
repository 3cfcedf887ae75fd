package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code up --worker-jit}: only workers get it, and start-worker starts them as up did. */
class WorkerJitTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout(2, 0, 0, "kv", "k:9092", Path.of("/tmp/state"));

    @Test
    void quickStopsWorkersAtTheClientCompilerAndLeavesTheOtherServicesAlone() {
        for (ServiceSpec spec : LAYOUT.services()) {
            boolean c1 = ProcessControl.jvmFlags(spec, WorkerJit.QUICK).contains("-XX:TieredStopAtLevel=1");
            assertThat(c1).as(spec.name()).isEqualTo(spec.isWorker());
        }
        assertThat(ProcessControl.jvmFlags(LAYOUT.worker(1), WorkerJit.TIERED))
                .isEqualTo(ProcessControl.jvmFlags(LAYOUT.worker(1), WorkerJit.QUICK).stream()
                        .filter(f -> !f.equals("-XX:TieredStopAtLevel=1")).toList());
    }

    @Test
    void theChoiceOfUpIsWhatStartWorkerReadsBack(@TempDir Path tmp) {
        ClusterState state = ClusterState.load(tmp);
        WorkerJit.TIERED.save(state);
        state.save();
        assertThat(WorkerJit.load(ClusterState.load(tmp))).isEqualTo(WorkerJit.TIERED);
        assertThat(WorkerJit.load(ClusterState.load(tmp.resolve("recorded-before")))).isEqualTo(WorkerJit.QUICK);
    }

    @Test
    void theFlagTakesTheTwoNamesAndRefusesOthers() {
        assertThat(WorkerJit.parse("quick")).isEqualTo(WorkerJit.QUICK);
        assertThat(WorkerJit.parse("tiered")).isEqualTo(WorkerJit.TIERED);
        assertThatThrownBy(() -> WorkerJit.parse("c2")).isInstanceOf(LauncherException.class)
                .hasMessage("--worker-jit must be one of [quick, tiered], not 'c2'");
    }
}
