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
    void twoModelsHaveTheirOwnPoolsAndPlannersAndTwoGatewaysShareTheLaunchedRedis() {
        ClusterLayout layout = new ClusterLayout(1, 0, 0, "kv", "k:9092", STATE, 1.0,
                List.of(ServedModel.parse("A", null, null, true, STATE), ServedModel.parse("B", null, null, true, STATE)), 1,
                null, KvbmOptions.NONE, GatewayOptions.parse(2, null, List.of("rate-limit.requests-per-period=50")));
        List<ServiceSpec> services = layout.services();
        assertThat(services).extracting(ServiceSpec::name).containsExactly("kv-indexer", "router", "planner", "planner-1",
                "worker-0", "worker-1", "gateway", "gateway-1");
        assertThat(byName(services, "worker-0").args()).contains("--flotilla.worker.model=A");
        assertThat(byName(services, "worker-1").args()).contains("--flotilla.worker.model=B", "--flotilla.worker.index=1");
        assertThat(byName(services, "planner").args()).contains("--flotilla.planner.model=A", "--server.port=8084");
        assertThat(byName(services, "planner-1").args()).contains("--flotilla.planner.model=B", "--server.port=8061");
        assertThat(byName(services, "planner-1").managementPort()).isEqualTo(8061);
        assertThat(byName(services, "gateway-1").ports()).containsEntry("http", 8001).containsEntry("mgmt", 8071);
        for (String g : List.of("gateway", "gateway-1")) {
            assertThat(byName(services, g).args()).contains("--flotilla.gateway.default-model=A",
                    "--flotilla.gateway.limits.redis-uri=redis://127.0.0.1:6380",
                    "--flotilla.gateway.rate-limit.requests-per-period=50");
        }
        assertThat(byName(services, "gateway-1").args()).contains("--server.port=8001", "--management.server.port=8071");
    }

    @Test
    void eachModelsPrefillWorkersComeFirstInItsOwnPool() {
        ClusterLayout layout = new ClusterLayout(0, 1, 1, "kv", "k:9092", STATE, 1.0,
                List.of(ServedModel.parse("A", null, null, true, STATE), ServedModel.parse("B", null, null, true, STATE)), 1,
                null, KvbmOptions.NONE, GatewayOptions.ONE);
        assertThat(layout.workerCount()).isEqualTo(4);
        assertThat(List.of(0, 1, 2, 3)).extracting(layout::roleOf).containsExactly("prefill", "decode", "prefill", "decode");
        assertThat(List.of(0, 1, 2, 3)).extracting(n -> layout.modelOf(n).name()).containsExactly("A", "A", "B", "B");
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new ClusterLayout(1, 0, 0, "kv", "k:9092", STATE, 1.0,
                        List.of(ServedModel.DEFAULT, ServedModel.DEFAULT), 1, null, KvbmOptions.NONE, GatewayOptions.ONE))
                .hasMessageContaining("every --model must be a different name");
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

    @Test
    void twoRoutersHaveTheirOwnNamesAndPortsAndTheGatewayIsGivenBoth() {
        ClusterLayout layout = new ClusterLayout(2, 0, 0, "kv", "k:9092", STATE, 1.0, ServedModel.DEFAULT, 2);
        List<ServiceSpec> services = layout.services();
        assertThat(services).extracting(ServiceSpec::name)
                .containsExactly("kv-indexer", "router", "router-1", "planner", "worker-0", "worker-1", "gateway");
        assertThat(byName(services, "router").ports()).containsEntry("grpc", 7001).containsEntry("mgmt", 8082);
        assertThat(byName(services, "router-1").ports()).containsEntry("grpc", 7011).containsEntry("mgmt", 8091);
        assertThat(byName(services, "router-1").args()).contains("--flotilla.router.name=router-1",
                "--flotilla.router.grpc-port=7011", "--server.port=8091", "--flotilla.router.mode=kv");
        assertThat(byName(services, "router").args()).contains("--flotilla.router.name=router");
        assertThat(byName(services, "gateway").args())
                .contains("--flotilla.gateway.router-address=127.0.0.1:7001,127.0.0.1:7011");
        assertThat(layout.router(1)).isEqualTo(byName(services, "router-1"));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> layout.router(2))
                .hasMessage("this cluster has 2 routers (0 … 1), not router 2");
    }

    @Test
    void oneRouterIsTheDefaultAndTheGatewayGetsItAlone() {
        ClusterLayout layout = new ClusterLayout(1, 0, 0, "kv", "k:9092", STATE);
        assertThat(layout.routers()).isEqualTo(1);
        assertThat(byName(layout.services(), "gateway").args()).contains("--flotilla.gateway.router-address=127.0.0.1:7001");
        org.assertj.core.api.Assertions.assertThatThrownBy(
                () -> new ClusterLayout(1, 0, 0, "kv", "k:9092", STATE, 1.0, ServedModel.DEFAULT, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private static ServiceSpec byName(List<ServiceSpec> services, String name) {
        return services.stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow();
    }
}
