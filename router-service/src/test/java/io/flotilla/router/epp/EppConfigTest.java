package io.flotilla.router.epp;

import io.flotilla.router.core.RouterDefaults;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.config.EppConfig;
import io.flotilla.router.config.RouterProperties;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.service.RequestRouter;
import io.flotilla.router.service.RouterMetrics;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;
import java.time.Duration;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** EPP mode is off unless enabled; enabled, the picker serves on its own port beside the router's request path. */
class EppConfigTest {

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RouterProperties.class)
    static class Router {
        @Bean(destroyMethod = "close")
        IndexerClient indexerClient() {
            return new IndexerClient("127.0.0.1:1", Duration.ofMillis(50));
        }

        @Bean(destroyMethod = "close")
        RequestRouter requestRouter(IndexerClient indexer) {
            RouterConfig config = RouterDefaults.config();
            return new RequestRouter(config, new WorkerDirectory(), BookingLedger.create("r", config), indexer,
                    new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]),
                    new RouterMetrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(1), "r");
        }
    }

    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withUserConfiguration(Router.class, EppConfig.class);

    @Test
    void offByDefault() {
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(GrpcEndpoint.class));
    }

    @Test
    void enabledItServesOnItsOwnPort() {
        runner.withPropertyValues("flotilla.router.epp.enabled=true", "flotilla.router.epp.port=0",
                "flotilla.router.epp.failure-mode=FailOpen", "flotilla.router.epp.objectives.batch=-1").run(context -> {
            assertThat(context).hasNotFailed();
            GrpcEndpoint endpoint = context.getBean(GrpcEndpoint.class);
            assertThat(endpoint.running()).isTrue();
            io.grpc.ManagedChannel channel = io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder
                    .forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
            try {
                var health = io.grpc.health.v1.HealthGrpc.newBlockingStub(channel);
                for (String service : java.util.List.of("liveness", "readiness", "envoy.service.ext_proc.v3.ExternalProcessor")) {
                    assertThat(health.check(io.grpc.health.v1.HealthCheckRequest.newBuilder().setService(service).build())
                            .getStatus()).as(service).isEqualTo(io.grpc.health.v1.HealthCheckResponse.ServingStatus.SERVING);
                }
            } finally {
                channel.shutdownNow();
            }
            EppSettings epp = context.getBean(RouterProperties.class).epp();
            assertThat(epp.failOpen()).isTrue();
            assertThat(epp.priority("batch")).isEqualTo(-1);
            assertThat(epp.priority("unknown")).isZero();
        });
    }
}
