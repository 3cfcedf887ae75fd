package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** The router and the indexer start with their whole heap; every other service grows its heap from 16 MB. */
class JvmHeapFlagsTest {

    private static final ClusterLayout LAYOUT = new ClusterLayout(2, 0, 0, "kv", "k:9092", Path.of("/tmp/state"));

    @Test
    void theRequestPathsServicesStartAtTheirMaximumHeap() {
        for (ServiceSpec spec : LAYOUT.services()) {
            boolean requestPath = spec.module().equals("router-service") || spec.module().equals("kv-indexer-service");
            assertThat(ProcessControl.jvmFlags(spec, WorkerJit.QUICK))
                    .as(spec.name())
                    .contains("-Xmx" + spec.heap(), requestPath ? "-Xms" + spec.heap() : "-Xms16m");
        }
        assertThat(LAYOUT.services()).extracting(ServiceSpec::module)
                .contains("router-service", "kv-indexer-service", "gateway-service", "worker-agent");
    }
}
