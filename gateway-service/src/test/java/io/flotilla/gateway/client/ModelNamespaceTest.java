package io.flotilla.gateway.client;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A model whose workers hash in another namespace than the gateway is refused loudly, not served with 200s. */
class ModelNamespaceTest {

    private volatile List<WorkerInfo> workers = List.of();
    private final Server server;
    private final ManagedChannel channel;

    ModelNamespaceTest() throws IOException {
        server = NettyServerBuilder.forPort(0).addService(new RouterServiceGrpc.RouterServiceImplBase() {
            @Override
            public void listWorkers(ListWorkersRequest request, StreamObserver<ListWorkersResponse> out) {
                out.onNext(ListWorkersResponse.newBuilder().addAllWorkers(workers).build());
                out.onCompleted();
            }
        }).build().start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", server.getPort()).usePlaintext().build();
    }

    @AfterEach
    void close() {
        channel.shutdownNow();
        server.shutdownNow();
    }

    private static WorkerInfo worker(String id, String model, String tokenizer, String layout) {
        return WorkerInfo.newBuilder().setWorkerId(id).setModel(model).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                .setState(WorkerState.WORKER_STATE_READY).setRoutable(true).setBlockSize(16).setEndpoint(id + ":1")
                .setTokenizerId(tokenizer).setTokenizerSource("src-of-" + tokenizer).setKvLayout(layout).build();
    }

    private ModelCatalog catalog() {
        // the gateway's side: tokenizer "gw-tok" for every model, layout bf16/bs16/paged
        return new ModelCatalog(new RouterClient(List.of(channel), new RouteDeadline(Duration.ofSeconds(5), Duration.ofSeconds(5), 99, 1,
                        Duration.ofSeconds(10), 1, System::nanoTime), Duration.ofSeconds(5), (router, outcome, nanos) -> { }),
                Clock.systemUTC(),
                Duration.ZERO, (model, bs, tokenizer, source, layout) -> {
                    if (!layout.equals("bf16/bs16/paged")) {
                        return Optional.of("layout " + layout);
                    }
                    return tokenizer.equals("gw-tok") ? Optional.empty()
                            : Optional.of("the gateway tokenizes it with 'gw-tok' but its workers hash with tokenizer '" + tokenizer + "'");
                });
    }

    @Test
    void aMismatchedTokenizerIsANamedErrorOnTheModelAndInTheListAndNeverServed() {
        workers = List.of(worker("w0", "good", "gw-tok", "bf16/bs16/paged"), worker("w1", "bad", "meta-llama/Llama-3.1-8B",
                "bf16/bs16/paged"));
        ModelCatalog catalog = catalog();
        assertThat(catalog.require("good").block().routable()).isTrue();
        assertThatThrownBy(() -> catalog.require("bad").block()).isInstanceOfSatisfying(ApiError.class, e -> {
            assertThat(e.status()).isEqualTo(500);
            assertThat(e.code()).isEqualTo("model_namespace_mismatch");
            assertThat(e.getMessage()).contains("meta-llama/Llama-3.1-8B").contains("gw-tok");
        });
        assertThat(catalog.models().block()).filteredOn(m -> m.name().equals("bad")).singleElement()
                .satisfies(m -> assertThat(m.problem()).contains("meta-llama/Llama-3.1-8B"));
        assertThat(catalog.problems()).containsOnlyKeys("bad");
    }

    @Test
    void workersThatDisagreeAmongThemselvesMakeTheModelUnroutable() {
        workers = List.of(worker("w0", "m", "gw-tok", "bf16/bs16/paged"), worker("w1", "m", "gw-tok", "fp8/bs16/paged"));
        assertThatThrownBy(() -> catalog().require("m").block()).isInstanceOfSatisfying(ApiError.class,
                e -> assertThat(e.getMessage()).contains("different block-hash namespaces").contains("fp8/bs16/paged"));
    }
}
