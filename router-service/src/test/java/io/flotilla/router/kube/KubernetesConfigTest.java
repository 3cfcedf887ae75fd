package io.flotilla.router.kube;

import io.flotilla.router.core.RouterDefaults;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.config.KubernetesConfig;
import io.flotilla.router.config.RouterProperties;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;
import io.flotilla.router.service.RequestRouter;
import io.flotilla.router.service.RouterMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;
import java.time.Duration;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/** The Kubernetes views are off unless enabled; enabled, both start with the context against the API server. */
class KubernetesConfigTest {

    private final CrudApiServer api = new CrudApiServer();
    private final KubernetesClient client = api.client();

    @AfterEach
    void stopApi() {
        api.close();
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(RouterProperties.class)
    static class Router {
        @Bean(destroyMethod = "close")
        IndexerClient indexerClient() {
            return new IndexerClient("127.0.0.1:1", Duration.ofMillis(50));
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean(destroyMethod = "close")
        RequestRouter requestRouter(IndexerClient indexer) {
            RouterConfig config = RouterDefaults.config();
            return new RequestRouter(config, new WorkerDirectory(), BookingLedger.create("r", config), indexer,
                    new MockProducer<>(true, null, new StringSerializer(), (t, v) -> new byte[0]),
                    new RouterMetrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(1), "r");
        }
    }

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner().withUserConfiguration(Router.class, KubernetesConfig.class)
                .withBean(KubernetesClient.class, () -> client, b -> b.setDestroyMethodName(""));
    }

    @Test
    void offByDefault() {
        runner().run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(WorkerPods.class)
                .doesNotHaveBean(RuntimeConfigMap.class));
    }

    @Test
    void enabledItWatchesThePodsAndAppliesTheConfigMapAtStart() {
        client.configMaps().inNamespace("ns1").resource(new ConfigMapBuilder().withNewMetadata().withName("routing")
                .endMetadata().addToData("mode", "round-robin").build()).create();
        runner().withPropertyValues("flotilla.router.kubernetes.enabled=true", "flotilla.router.kubernetes.namespace=ns1",
                "flotilla.router.kubernetes.config-map=routing").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(WorkerPods.class).hasSingleBean(RuntimeConfigMap.class);
            assertThat(context.getBean(RequestRouter.class).mode()).isEqualTo(Strategy.ROUND_ROBIN);
            MeterRegistry registry = context.getBean(MeterRegistry.class);
            assertThat(registry.get("flotilla.router.workers_without_pod").gauge().value()).isZero();
            assertThat(registry.get("flotilla.router.runtime_config").tag("outcome", "applied").counter().count()).isEqualTo(1);
        });
    }
}
