package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ClusterLayoutTest {

    private static final Path STATE = Path.of("/tmp/flotilla-test-state");

    @Test
    void defaultClusterHasEveryServiceWithArchitecturePorts() {
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "kv", "127.0.0.1:9092", STATE);
        List<ServiceSpec> services = layout.services();
        assertThat(services).extracting(ServiceSpec::name)
                .containsExactly("kv-indexer", "router", "planner", "worker-0", "worker-1", "gateway");
        assertThat(byName(services, "gateway").ports()).containsEntry("http", 8000).containsEntry("mgmt", 8081);
        assertThat(byName(services, "router").ports()).containsEntry("grpc", 7001).containsEntry("mgmt", 8082);
        assertThat(byName(services, "kv-indexer").ports()).containsEntry("grpc", 7002).containsEntry("mgmt", 8083);
        assertThat(byName(services, "planner").managementPort()).isEqualTo(8084);
        assertThat(byName(services, "worker-1").ports())
                .containsEntry("grpc", 7101).containsEntry("transfer", 7301).containsEntry("mgmt", 8101);
        assertThat(byName(services, "worker-1").args())
                .contains("--flotilla.worker.id=worker-1", "--flotilla.worker.role=aggregated",
                        "--spring.kafka.bootstrap-servers=127.0.0.1:9092");
        assertThat(byName(services, "router").args()).contains("--flotilla.router.mode=kv");
    }

    @Test
    void disaggregatedLayoutNumbersPrefillWorkersFirst() {
        ClusterLayout layout = new ClusterLayout(0, 1, 2, "kv", "k:9092", STATE);
        assertThat(layout.workerCount()).isEqualTo(3);
        assertThat(layout.roleOf(0)).isEqualTo("prefill");
        assertThat(layout.roleOf(1)).isEqualTo("decode");
        assertThat(layout.roleOf(2)).isEqualTo("decode");
        assertThat(layout.worker(0).args()).contains("--flotilla.worker.role=prefill");
    }

    private static ServiceSpec byName(List<ServiceSpec> services, String name) {
        return services.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }
}
