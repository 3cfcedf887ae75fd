package io.flotilla.worker.agent;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.worker.WorkerApplication;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Several simulated workers in one JVM: each has its own id, gRPC port and epoch, and registers. */
@ExtendWith(KafkaBrokerExtension.class)
class WorkerFleetKafkaTest {

    @Test
    void instancesAreIndependentWorkers(KafkaBroker kafka) {
        String id = "fleet-" + System.nanoTime();
        int basePort = KafkaBroker.freePort();
        var start = WorkerAgentKafkaTest.endOffsets(kafka);
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WorkerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                "--flotilla.worker.id=" + id, "--flotilla.worker.instances=3", "--flotilla.worker.grpc-port=" + basePort,
                "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.sim.total-blocks=256",
                "--flotilla.worker.sim.kv-bytes-per-block=0")) {
            List<WorkerInstance> workers = ctx.getBean(WorkerFleet.class).workers();
            assertThat(workers).extracting(w -> w.identity().id()).containsExactly(id + "-0", id + "-1", id + "-2");
            Set<Long> epochs = new HashSet<>();
            for (int i = 0; i < 3; i++) {
                ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", basePort + i).usePlaintext().build();
                try {
                    var snap = WorkerServiceGrpc.newBlockingStub(ch).getKvSnapshot(KvSnapshotRequest.getDefaultInstance());
                    assertThat(snap.getWorkerId()).isEqualTo(id + "-" + i);
                    epochs.add(snap.getEpoch());
                } finally {
                    ch.shutdownNow();
                }
            }
            assertThat(epochs).hasSize(3);
            for (int i = 0; i < 3; i++) {
                String worker = id + "-" + i;
                List<WorkerStatus> statuses = WorkerAgentKafkaTest.read(kafka, Topics.WORKERS.name(), start,
                        new ProtoDeserializer.WorkerStatuses(), worker, l -> !l.isEmpty());
                assertThat(statuses).isNotEmpty();
                assertThat(statuses.get(0).getEndpoint()).isEqualTo("127.0.0.1:" + (basePort + i));
            }
        }
    }

    /** gRPC port 0: every worker binds a port of its own and advertises the one it got; the endpoint answers there. */
    @Test
    void portZeroAdvertisesEachWorkersBoundPort(KafkaBroker kafka) {
        String id = "fleet0-" + System.nanoTime();
        var start = WorkerAgentKafkaTest.endOffsets(kafka);
        try (ConfigurableApplicationContext ctx = new SpringApplicationBuilder(WorkerApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                "--flotilla.worker.id=" + id, "--flotilla.worker.instances=3", "--flotilla.worker.grpc-port=0",
                "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.sim.total-blocks=256",
                "--flotilla.worker.sim.kv-bytes-per-block=0")) {
            List<WorkerInstance> workers = ctx.getBean(WorkerFleet.class).workers();
            assertThat(workers).extracting(WorkerInstance::grpcPort).doesNotContain(0).doesNotHaveDuplicates();
            for (WorkerInstance w : workers) {
                assertThat(w.identity().endpoint()).isEqualTo("127.0.0.1:" + w.grpcPort());
                ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", w.grpcPort()).usePlaintext().build();
                try {
                    assertThat(WorkerServiceGrpc.newBlockingStub(ch).getKvSnapshot(KvSnapshotRequest.getDefaultInstance())
                            .getWorkerId()).isEqualTo(w.identity().id());
                } finally {
                    ch.shutdownNow();
                }
                List<WorkerStatus> statuses = WorkerAgentKafkaTest.read(kafka, Topics.WORKERS.name(), start,
                        new ProtoDeserializer.WorkerStatuses(), w.identity().id(), l -> !l.isEmpty());
                assertThat(statuses.get(0).getEndpoint()).isEqualTo(w.identity().endpoint());
            }
        }
    }
}
