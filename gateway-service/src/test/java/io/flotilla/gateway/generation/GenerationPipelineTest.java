package io.flotilla.gateway.generation;

import io.flotilla.gateway.client.WorkerClient;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowLimits;
import io.flotilla.gateway.flow.FlowMetrics;
import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.Priority;
import io.flotilla.gateway.routing.FleetView;
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
import reactor.core.scheduler.Schedulers;

import java.time.Clock;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

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
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        FlowController flow = new FlowController(m -> new FlowLimits(10, 10, 10, Duration.ofSeconds(30)), Schedulers.parallel(),
                new FlowMetrics(registry, t -> FlowMetrics.OTHER), 4096, t -> 1, Duration.ofMillis(500));
        return new GenerationPipeline(FakeCluster.routerClient(routerChannel), workers, flow, new FleetView(),
                new GatewayMetrics(registry), Clock.systemUTC(), migrationLimit, idle, Duration.ofSeconds(1),
                Schedulers.parallel(), 4096);
    }

    private static RequestContext context(GenerationJob job) {
        RequestContext ctx = new RequestContext(job.requestId(), Clock.systemUTC().instant());
        ctx.on(new RequestEvent.Resolved(job));
        ctx.on(new RequestEvent.Placed(new FlowRequest(job.requestId(), job.model(), Priority.STANDARD, "t", 10,
                Schedulers.parallel().now(java.util.concurrent.TimeUnit.NANOSECONDS) + Duration.ofSeconds(30).toNanos())));
        return ctx;
    }

    private static GenerationJob job(String id, int maxTokens) {
        return new GenerationJob(id, "flotilla-sim", "t", new int[]{1, 2, 3}, maxTokens,
                SamplingParams.newBuilder().setTopP(1).build(), 1, List.of(), new int[0], false, true,
                io.flotilla.protocol.hash.ScopedHasher.shared(
                        new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16)),
                FakeCluster.TOKENIZER,
                null);
    }

    @Test
    void aSilentWorkerCountsAsFailedAndTheRequestMigrates() {
        cluster.workerA.behave(FakeWorker.Behaviour.holdAfter(2)); // sends 2 tokens, then nothing, forever
        RequestContext ctx = context(job("idle-1", 6));
        List<RequestEvent.Attempt> events = pipeline(3, Duration.ofSeconds(1)).run(ctx.job(), ctx)
                .collectList().block(Duration.ofSeconds(30));

        assertThat(events.get(events.size() - 1)).isEqualTo(new RequestEvent.Finished(FinishReason.FINISH_REASON_LENGTH));
        assertThat(events).filteredOn(e -> e instanceof RequestEvent.Migrated)
                .containsExactly(new RequestEvent.Migrated("worker-a"));
        RequestResult result = ctx.result();
        assertThat(result.generatedCount()).isEqualTo(6);
        assertThat(result.migrations()).isEqualTo(1);
        assertThat(result.worker()).isEqualTo("worker-b");
        assertThat(result.firstWorker()).isEqualTo("worker-a");
        await().atMost(Duration.ofSeconds(10)).until(() -> cluster.router.releases.stream().filter("idle-1"::equals).count() == 2);
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
        RequestContext ctx = context(job("limit-1", 10));

        assertThatThrownBy(() -> pipeline(2, Duration.ofSeconds(30)).run(ctx.job(), ctx)
                .collectList().block(Duration.ofSeconds(30)))
                .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.code()).isEqualTo("worker_unavailable"));
        assertThat(ctx.result().migrations()).isEqualTo(2);
        assertThat(cluster.router.routesOf("limit-1")).hasSize(3);
        assertThat(ctx.result().generatedCount()).isEqualTo(3);
    }
}
