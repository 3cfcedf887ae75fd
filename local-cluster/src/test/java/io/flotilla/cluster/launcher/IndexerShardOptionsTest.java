package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** {@code up --indexer-shards N}: N indexers of one consumer group, every router given all of them. */
class IndexerShardOptionsTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout(2, 0, 0, "kv", "127.0.0.1:9092", Path.of(".flotilla"),
            1.0, ServedModel.DEFAULT, 2);

    @Test
    void threeShardsHaveTheirOwnPortsOneGroupOneSnapshotDirAndEveryRouterAsksAll() {
        List<ServiceSpec> services = new IndexerShardOptions(3).apply(LAYOUT.services());
        List<ServiceSpec> shards = services.stream().filter(s -> s.module().equals("kv-indexer-service")).toList();
        assertThat(shards).extracting(ServiceSpec::name).containsExactly("kv-indexer", "kv-indexer-1", "kv-indexer-2");
        assertThat(shards).extracting(ServiceSpec::managementPort).containsExactly(8083, 8051, 8052);
        assertThat(shards).extracting(s -> s.ports().get("grpc")).containsExactly(7002, 7021, 7022);
        for (ServiceSpec s : shards) {
            assertThat(s.args()).contains("--flotilla.indexer.sharding.enabled=true",
                    "--flotilla.indexer.sharding.group-id=flotilla-indexer",
                    "--flotilla.indexer.snapshot-dir=" + Path.of(".flotilla").resolve("indexer"),
                    "--flotilla.indexer.grpc-port=" + s.ports().get("grpc"), "--server.port=" + s.managementPort());
            assertThat(s.args().stream().filter(a -> a.startsWith("--server.port="))).hasSize(1);
        }
        List<ServiceSpec> routers = services.stream().filter(s -> s.module().equals("router-service")).toList();
        assertThat(routers).hasSize(2).allSatisfy(r -> assertThat(r.args())
                .contains("--flotilla.router.indexer.addresses=127.0.0.1:7002,127.0.0.1:7021,127.0.0.1:7022"));
    }

    @Test
    void oneShardIsTheUsualIndexerAndCountsBeyondThePartitionsAreRefusedByName() {
        assertThat(IndexerShardOptions.ONE.apply(LAYOUT.services())).isEqualTo(LAYOUT.services());
        assertThatThrownBy(() -> new IndexerShardOptions(9)).isInstanceOf(LauncherException.class)
                .hasMessageContaining("--indexer-shards").hasMessageContaining("flotilla.kv-events");
        assertThatThrownBy(() -> new IndexerShardOptions(0)).isInstanceOf(LauncherException.class)
                .hasMessageContaining("--indexer-shards");
        FlotillaCli.Up up = new FlotillaCli.Up();
        new CommandLine(up).parseArgs("--indexer-shards", "12");
        assertThatThrownBy(up::call).isInstanceOf(LauncherException.class).hasMessageContaining("--indexer-shards");
    }
}
