package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class LocalClusterTest {

    @Test
    void upRefusesATakenPortBeforeStartingAnything(@TempDir Path root) throws Exception {
        LocalCluster cluster = new LocalCluster(root, new PrintStream(new ByteArrayOutputStream()));
        org.junit.jupiter.api.Assumptions.assumeFalse(ProcessControl.portInUse(7002) || ProcessControl.portInUse(8083)
                || ProcessControl.portInUse(8082), "a local cluster already holds the default ports");
        try (ServerSocket taken = new ServerSocket()) {
            taken.setReuseAddress(true);
            taken.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 8082));
            assertThatThrownBy(() -> cluster.up(ClusterSpec.builder().workers(2).externalKafka("127.0.0.1:1").timeout(Duration.ofSeconds(5)).build()))
                    .isInstanceOf(LauncherException.class)
                    .hasMessage("port 8082 (router mgmt) is already in use");
        }
        assertThat(cluster.status()).isEmpty();
        assertThat(Files.exists(cluster.stateDir().resolve("cluster.properties"))).isFalse();
    }

    @Test
    void upRefusesWhileARecordedProcessIsAlive(@TempDir Path root) {
        ClusterState state = ClusterState.load(root.resolve(".flotilla"));
        ProcessHandle self = ProcessHandle.current();
        state.put(new RunningService("router", self.pid(), self.info().startInstant().orElse(null), "grpc=7001", 8082,
                root.resolve("router.log")));
        state.save();
        LocalCluster cluster = new LocalCluster(root, new PrintStream(new ByteArrayOutputStream()));
        assertThatThrownBy(() -> cluster.up(ClusterSpec.builder().workers(2).timeout(Duration.ofSeconds(5)).build()))
                .isInstanceOf(LauncherException.class)
                .hasMessageContaining("already running (router pid " + self.pid() + ")");
    }

    @Test
    void stateSurvivesARoundTripAndRecognisesRecycledPids(@TempDir Path dir) {
        ClusterState state = ClusterState.load(dir);
        ProcessHandle self = ProcessHandle.current();
        Instant start = self.info().startInstant().orElseThrow();
        state.put(new RunningService("worker-0", self.pid(), start, "grpc=7100", 8100, dir.resolve("w.log")));
        state.put(new RunningService("worker-1", self.pid(), start.minusSeconds(3600), "grpc=7101", 8101, dir.resolve("w1.log")));
        state.setLayout("decode", "3");
        state.save();

        ClusterState again = ClusterState.load(dir);
        assertThat(again.services()).extracting(RunningService::name).containsExactly("worker-0", "worker-1");
        assertThat(again.get("worker-0").alive()).isTrue();
        assertThat(again.get("worker-1").alive()).as("same pid, different start time: not our process").isFalse();
        assertThat(again.layout("decode", "0")).isEqualTo("3");
        assertThat(again.get("worker-0").managementPort()).isEqualTo(8100);
    }

    @Test
    void commandsOnAStoppedClusterSayWhy(@TempDir Path root) {
        LocalCluster cluster = new LocalCluster(root, new PrintStream(new ByteArrayOutputStream()));
        assertThatThrownBy(() -> cluster.killWorker(1)).hasMessage("worker-1 is not running");
        assertThatThrownBy(() -> cluster.startWorker(1, Duration.ofSeconds(1)))
                .hasMessage("no cluster is running; start one with bin/flotilla up");
        assertThatThrownBy(() -> cluster.killRouter(1)).hasMessage("router-1 is not running");
        assertThatThrownBy(() -> cluster.startRouter(1, Duration.ofSeconds(1)))
                .hasMessage("no cluster is running; start one with bin/flotilla up");
        assertThat(cluster.down(Duration.ofSeconds(1))).isZero();
    }

    @Test
    void theRouterCountIsRecordedAndStartRouterKeepsToIt(@TempDir Path root) {
        Path stateDir = root.resolve(".flotilla");
        ClusterState state = ClusterState.load(stateDir);
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "load", "k:9092", stateDir, 1.0, ServedModel.DEFAULT, 2);
        LocalCluster.record(state, layout, PlannerOptions.SHADOW, ExternalEngines.NONE);
        state.put(new RunningService("router", Long.MAX_VALUE, null, "grpc=7001", 8082, root.resolve("router.log")));
        state.save();

        ClusterLayout recorded = LocalCluster.recordedLayout(ClusterState.load(stateDir), stateDir);
        assertThat(recorded.routers()).isEqualTo(2);
        assertThat(recorded.router(1)).isEqualTo(layout.router(1));
        LocalCluster cluster = new LocalCluster(root, stateDir, new PrintStream(new ByteArrayOutputStream()));
        assertThatThrownBy(() -> cluster.startRouter(2, Duration.ofSeconds(1)))
                .isInstanceOf(LauncherException.class).hasMessage("this cluster has 2 routers (0 … 1), not router 2");
        assertThatThrownBy(() -> cluster.killRouter(10)).isInstanceOf(LauncherException.class);
    }

    @Test
    void theModelsAndGatewaysAreRecordedSoStartWorkerStartsAWorkerOfItsModel(@TempDir Path root) {
        Path stateDir = root.resolve(".flotilla");
        ClusterState state = ClusterState.load(stateDir);
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "kv", "k:9092", stateDir, 1.0,
                java.util.List.of(ServedModel.parse("A", null, null, true, root), ServedModel.parse("B", null, 32, true, root)),
                1, null, KvbmOptions.NONE, GatewayOptions.parse(2, null, java.util.List.of()));
        LocalCluster.record(state, layout, PlannerOptions.SHADOW, ExternalEngines.NONE);
        state.save();

        ClusterLayout recorded = LocalCluster.recordedLayout(ClusterState.load(stateDir), stateDir);
        assertThat(recorded.models()).isEqualTo(layout.models());
        assertThat(recorded.gateways().replicas()).isEqualTo(2);
        assertThat(recorded.gateways().launchesRedis()).isTrue();
        assertThat(recorded.worker(3)).isEqualTo(layout.worker(3));
        assertThat(recorded.worker(3).args()).contains("--flotilla.worker.model=B", "--flotilla.worker.sim.block-size=32");
    }
}
