package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.client.WorkerClient;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.metrics.GatewayMetrics;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.SamplingParams;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The pipeline without HTTP, against the fake cluster: idle timeouts and the migration limit. */
class GenerationPipelineTest {

    private final FakeCluster cluster = FakeCluster.get();
    private ManagedChannel routerChannel;
    private WorkerClient workers;

    @BeforeEach
    void setUp() {
        cluster.reset();
        routerChannel = NettyChannelBuilder.forTarget(cluster.routerAddress()).usePlaintext().build();
        workers = new WorkerClient(Duration.ofSeconds(10));
    }

    @AfterEach
    void tearDown() {
        routerChannel.shutdownNow();
        workers.close();
    }

    private GenerationPipeline pipeline(int migrationLimit, Duration idle) {
        return new GenerationPipeline(new RouterClient(routerChannel, Duration.ofSeconds(10), Duration.ofSeconds(10)),
                workers, new GatewayMetrics(new SimpleMeterRegistry()), Clock.systemUTC(), migrationLimit, idle);
    }

    private static GenerationJob job(String id, int maxTokens) {
        return new GenerationJob(id, "flotilla-sim", "t", new int[]{1, 2, 3}, maxTokens,
                SamplingParams.newBuilder().setTopP(1).build(), 1, List.of(), new int[0], false, true,
                new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16), FakeCluster.TOKENIZER,
                null);
    }

    @Test
    void aSilentWorkerCountsAsFailedAndTheRequestMigrates() {
        cluster.workerA.behave(FakeWorker.Behaviour.holdAfter(2)); // sends 2 tokens, then nothing, forever
        RequestProgress progress = new RequestProgress(Clock.systemUTC().instant());
        List<WorkerEvent> events = pipeline(3, Duration.ofSeconds(1)).run(job("idle-1", 6), progress)
                .collectList().block(Duration.ofSeconds(30));

        assertThat(events.get(events.size() - 1)).isEqualTo(new WorkerEvent.Finished(FinishReason.FINISH_REASON_LENGTH));
        assertThat(progress.generatedCount()).isEqualTo(6);
        assertThat(progress.migrations()).isEqualTo(1);
        assertThat(progress.worker()).isEqualTo("worker-b");
        assertThat(cluster.workerA.cancelled).contains("idle-1");
        assertThat(cluster.router.failures).singleElement().satisfies(f -> {
            assertThat(f.getWorkerId()).isEqualTo("worker-a");
            assertThat(f.getReason()).contains("idle");
        });
    }

    @Test
    void theMigrationLimitIsHonoured() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(1, Status.UNAVAILABLE));
        cluster.workerB.behave(FakeWorker.Behaviour.failAfter(1, Status.UNAVAILABLE));
        cluster.router.decide(r -> cluster.decisionFor(r.getExcludeCount() % 2 == 0 ? cluster.workerA : cluster.workerB).build());
        RequestProgress progress = new RequestProgress(Clock.systemUTC().instant());

        assertThatThrownBy(() -> pipeline(2, Duration.ofSeconds(30)).run(job("limit-1", 10), progress)
                .collectList().block(Duration.ofSeconds(30)))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.code()).isEqualTo("worker_unavailable"));
        assertThat(progress.migrations()).isEqualTo(2);
        assertThat(cluster.router.routesOf("limit-1")).hasSize(3);
        assertThat(progress.generatedCount()).isEqualTo(3);
    }
}
