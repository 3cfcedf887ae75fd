package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code up --fleet N}: N workers in JVMs of at most K, numbered on, each binding a free gRPC port. */
class FleetOptionsTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout(0, 0, 0, "kv", "127.0.0.1:9092", Path.of(".flotilla"), 50.0);

    @Test
    void workersAreSpreadOverJvmsOfAtMostPerJvmNumberedOn() {
        List<ServiceSpec> jvms = new FleetOptions(300, 128).services(LAYOUT);
        assertThat(jvms).extracting(ServiceSpec::name).containsExactly("fleet-0", "fleet-1", "fleet-2");
        assertThat(jvms).allMatch(ServiceSpec::isWorker);
        assertThat(jvms.get(0).args()).contains("--flotilla.worker.index=0", "--flotilla.worker.instances=128",
                "--flotilla.worker.grpc-port=0", "--flotilla.worker.sim.kv-bytes-per-block=0",
                "--flotilla.worker.sim.speedup=50.0", "--spring.kafka.bootstrap-servers=127.0.0.1:9092",
                "--flotilla.worker.model=flotilla-sim");
        assertThat(jvms.get(2).args()).contains("--flotilla.worker.index=256", "--flotilla.worker.instances=44");
        assertThat(jvms).extracting(ServiceSpec::managementPort).containsExactly(8100, 8101, 8102);
        assertThat(jvms.get(0).heap()).isEqualTo("288m");
        assertThat(jvms.get(2).heap()).isEqualTo("162m");
    }

    @Test
    void noFleetHasNoJvmsAndBadSizesAreRefusedByName() {
        assertThat(FleetOptions.NONE.services(LAYOUT)).isEmpty();
        assertThatThrownBy(() -> new FleetOptions(8, 0)).hasMessageContaining("--fleet-per-jvm");
        assertThatThrownBy(() -> new FleetOptions(8, 513)).hasMessageContaining("--fleet-per-jvm");
        assertThatThrownBy(() -> new FleetOptions(-1, 8)).hasMessageContaining("--fleet");
    }

    @Test
    void theFleetReplacesTheWorkerFlagsAndIsRefusedBesideThem() {
        for (String[] args : List.of(new String[]{"--fleet", "8", "--workers", "2"},
                new String[]{"--fleet", "8", "--prefill", "1", "--decode", "1"},
                new String[]{"--fleet", "8", "--planner", "local"},
                new String[]{"--fleet", "8", "--kvbm-host", "1GiB"})) {
            assertThatThrownBy(() -> up(args).call()).as(String.join(" ", args))
                    .isInstanceOf(LauncherException.class).hasMessageContaining("--fleet runs simulated aggregated workers");
        }
        assertThatThrownBy(() -> up("--fleet-per-jvm", "4").call()).isInstanceOf(LauncherException.class)
                .hasMessageContaining("give --fleet N");
        assertThatThrownBy(() -> up("--fleet", "0").call()).isInstanceOf(LauncherException.class)
                .hasMessageContaining("at least one worker");
    }

    private static FlotillaCli.Up up(String... args) {
        FlotillaCli.Up up = new FlotillaCli.Up();
        new CommandLine(up).parseArgs(args);
        return up;
    }
}
