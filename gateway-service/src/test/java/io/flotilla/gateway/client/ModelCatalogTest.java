package io.flotilla.gateway.client;

import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.EngineCapabilities;
import io.flotilla.protocol.v1.SamplingFeature;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.util.List;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ModelCatalogTest {

    /** A clock tests move by hand. */
    static final class MovableClock extends Clock {
        volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    @Test
    void servedModelsAreThoseOfReadyRoutableAggregatedOrDecodeWorkers() {
        FakeCluster cluster = FakeCluster.get();
        ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.routerAddress()).usePlaintext().build();
        try {
            ModelCatalog catalog = new ModelCatalog(FakeCluster.routerClient(channel),
                    new MovableClock(), Duration.ofSeconds(1));
            assertThat(catalog.models().block()).extracting(ServedModel::name)
                    .containsExactly("flotilla-sim", "plain-model", "queue-model", "tight-model", "tiny-model");
            assertThat(catalog.require("flotilla-sim").block()).isEqualTo(new ServedModel("flotilla-sim", 16, 2,
                    "", "", "", "", FakeCluster.CAPABILITIES));
            assertThatThrownBy(() -> catalog.require("ghost-model").block())
                    .isInstanceOfSatisfying(ApiError.class, e -> assertThat(e.code()).isEqualTo("model_not_found"));
        } finally {
            channel.shutdownNow();
        }
    }

    @Test
    void aModelHonoursWhatEveryOneOfItsWorkersHonours() {
        EngineCapabilities sim = EngineCapabilities.newBuilder().addFeatures(SamplingFeature.SAMPLING_FEATURE_TOP_P)
                .addFeatures(SamplingFeature.SAMPLING_FEATURE_JSON_SCHEMA).addFeatures(SamplingFeature.SAMPLING_FEATURE_LOGPROBS)
                .setMaxTopLogprobs(20).build();
        EngineCapabilities older = EngineCapabilities.newBuilder().addFeatures(SamplingFeature.SAMPLING_FEATURE_LOGPROBS)
                .addFeatures(SamplingFeature.SAMPLING_FEATURE_TOP_P).setMaxTopLogprobs(5).build();
        assertThat(ModelCatalog.common(sim, older)).isEqualTo(EngineCapabilities.newBuilder()
                .addFeatures(SamplingFeature.SAMPLING_FEATURE_TOP_P).addFeatures(SamplingFeature.SAMPLING_FEATURE_LOGPROBS)
                .setMaxTopLogprobs(5).build());
        assertThat(ModelCatalog.common(sim, EngineCapabilities.getDefaultInstance()))
                .as("a worker that advertises nothing honours nothing").isEqualTo(EngineCapabilities.getDefaultInstance());
    }

    @Test
    void theLastListSurvivesARouterOutageAndNoListAtAllIs503() {
        FakeCluster cluster = FakeCluster.get();
        ManagedChannel channel = NettyChannelBuilder.forTarget(cluster.routerAddress()).usePlaintext().build();
        MovableClock clock = new MovableClock();
        ModelCatalog catalog = new ModelCatalog(FakeCluster.routerClient(channel),
                clock, Duration.ofSeconds(1));
        assertThat(catalog.models().block()).isNotEmpty();

        channel.shutdownNow(); // the router is gone
        clock.now = clock.now.plusSeconds(5);
        assertThat(catalog.require("flotilla-sim").block().name()).isEqualTo("flotilla-sim");

        ModelCatalog fresh = new ModelCatalog(FakeCluster.routerClient(channel),
                clock, Duration.ofSeconds(1));
        assertThatThrownBy(() -> fresh.models().block())
                .isInstanceOfSatisfying(ApiError.class, e -> {
                    assertThat(e.status()).isEqualTo(503);
                    assertThat(e.code()).isEqualTo("router_unavailable");
                });
    }

    @Test
    void aRestartedRouterListingNobodyYetDoesNotMakeModelsVanish() {
        FakeCluster cluster = FakeCluster.get();
        io.flotilla.gateway.fakes.FakeRouter restarted = new io.flotilla.gateway.fakes.FakeRouter(List.of(
                io.flotilla.protocol.v1.WorkerInfo.newBuilder().setWorkerId("w").setModel("m").setBlockSize(16)
                        .setRoutable(true).setState(io.flotilla.protocol.v1.WorkerState.WORKER_STATE_READY)
                        .setRole(io.flotilla.protocol.v1.WorkerRole.WORKER_ROLE_AGGREGATED).build()), r -> null);
        io.flotilla.protocol.grpc.GrpcEndpoint endpoint = new io.flotilla.protocol.grpc.GrpcEndpoint("restarting-router",
                "127.0.0.1", 0, List.of(restarted)).start();
        ManagedChannel channel = NettyChannelBuilder.forTarget("127.0.0.1:" + endpoint.port()).usePlaintext().build();
        try {
            MovableClock clock = new MovableClock();
            ModelCatalog catalog = new ModelCatalog(FakeCluster.routerClient(channel), clock, Duration.ofSeconds(1));
            assertThat(catalog.require("m").block().name()).isEqualTo("m");
            restarted.listWorkers(List.of()); // restarted: no heartbeat seen yet
            clock.now = clock.now.plusSeconds(5);
            for (int i = 0; i < 3; i++) {
                assertThat(catalog.require("m").block().name()).isEqualTo("m");
            }
        } finally {
            channel.shutdownNow();
            endpoint.close();
        }
    }
}
