package io.flotilla.router.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.protocol.v1.EmbedInput;
import io.flotilla.protocol.v1.EmbedRequest;
import io.flotilla.protocol.v1.EmbedResponse;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.router.RouterApplication;
import io.flotilla.worker.WorkerApplication;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Embeddings through real parts: two simulated workers on a real broker, one whose engine embeds and one whose does
 * not, advertise what they can; the router sends every embedding to the one that embeds, which serves it over gRPC,
 * and the other answers UNIMPLEMENTED.
 */
@ExtendWith(KafkaBrokerExtension.class)
class RouterEmbeddingsKafkaTest {

    @Test
    void embeddingsGoOnlyToTheWorkerThatAdvertisesThem(KafkaBroker kafka) throws Exception {
        String prefix = "emb-" + System.nanoTime() + "-";
        int routerPort = KafkaBroker.freePort();
        int[] workerPorts = {KafkaBroker.freePort(), KafkaBroker.freePort()};
        int[] dimensions = {0, 64};
        List<ConfigurableApplicationContext> workers = new java.util.ArrayList<>();
        for (int i = 0; i < workerPorts.length; i++) {
            workers.add(new SpringApplicationBuilder(WorkerApplication.class).run(
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                    "--flotilla.worker.id=" + prefix + i, "--flotilla.worker.grpc-port=" + workerPorts[i],
                    "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.sim.total-blocks=2048",
                    "--flotilla.worker.sim.kv-bytes-per-block=0", "--flotilla.worker.sim.speedup=100",
                    "--flotilla.worker.sim.embedding-dimensions=" + dimensions[i]));
        }
        ConfigurableApplicationContext router = new SpringApplicationBuilder(RouterApplication.class).run(
                "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                "--flotilla.router.grpc-port=" + routerPort,
                "--flotilla.router.indexer.address=127.0.0.1:" + KafkaBroker.freePort(),
                "--flotilla.router.indexer.deadline.fixed=200ms");
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", routerPort).usePlaintext().build();
        try {
            var stub = RouterServiceGrpc.newBlockingStub(channel);
            await().atMost(Duration.ofSeconds(30)).until(() -> ours(stub, prefix).size() == 2);
            Map<String, WorkerInfo> byId = ours(stub, prefix).stream()
                    .collect(Collectors.toMap(WorkerInfo::getWorkerId, w -> w));
            assertThat(byId.get(prefix + 0).getCapabilities().hasEmbedding()).isFalse();
            assertThat(byId.get(prefix + 1).getCapabilities().getEmbedding().getDimensions()).isEqualTo(64);
            assertThat(byId.get(prefix + 1).getCapabilities().getEmbedding().getTruncatable()).isTrue();

            for (int i = 0; i < 6; i++) {
                RouteDecision d = stub.withDeadlineAfter(5, TimeUnit.SECONDS).route(RouteRequest.newBuilder()
                        .setRequestId(prefix + "e" + i).setModel("flotilla-sim").setIsl(3).setBlockSize(16)
                        .setEmbed(true).build());
                assertThat(d.getWorkerId()).isEqualTo(prefix + 1);
                EmbedResponse r = embed(d.getWorkerEndpoint(), prefix + "e" + i);
                assertThat(r.getEmbeddings(0).getValuesCount()).isEqualTo(64);
                stub.release(RequestRef.newBuilder().setRequestId(prefix + "e" + i).build());
            }
            assertThatThrownBy(() -> embed(byId.get(prefix + 0).getEndpoint(), prefix + "x"))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
            assertThatThrownBy(() -> stub.route(RouteRequest.newBuilder().setRequestId(prefix + "bad")
                    .setModel("flotilla-sim").setIsl(3).setBlockSize(16).setEmbed(true).addSeqHashes(1).build()))
                    .isInstanceOfSatisfying(StatusRuntimeException.class,
                            e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT));
        } finally {
            channel.shutdownNow();
            router.close();
            workers.forEach(ConfigurableApplicationContext::close);
        }
    }

    private static EmbedResponse embed(String endpoint, String id) {
        String[] hostPort = endpoint.split(":");
        ManagedChannel ch = NettyChannelBuilder.forAddress(hostPort[0], Integer.parseInt(hostPort[1])).usePlaintext().build();
        try {
            return WorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(5, TimeUnit.SECONDS).embed(EmbedRequest.newBuilder()
                    .setRequestId(id).setModel("flotilla-sim")
                    .addInputs(EmbedInput.newBuilder().addTokenIds(1).addTokenIds(2).addTokenIds(3)).build());
        } finally {
            ch.shutdownNow();
        }
    }

    private static List<WorkerInfo> ours(RouterServiceGrpc.RouterServiceBlockingStub stub, String prefix) {
        return stub.listWorkers(ListWorkersRequest.getDefaultInstance()).getWorkersList().stream()
                .filter(w -> w.getWorkerId().startsWith(prefix)).toList();
    }
}
