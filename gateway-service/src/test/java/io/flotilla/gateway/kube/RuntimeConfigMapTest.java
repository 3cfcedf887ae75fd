package io.flotilla.gateway.kube;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.Priority;
import io.flotilla.gateway.limits.KeyRateLimits;
import io.flotilla.gateway.limits.LimitMetrics;
import io.github.bucket4j.TimeMeter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The gateway's runtime ConfigMap against the fabric8 mock API server in CRUD mode: a changed ConfigMap changes a
 * band and the rate limit through the paths requests read them from; a bad version is refused whole and counted;
 * deleting it returns to the configuration; off unless enabled.
 */
class RuntimeConfigMapTest {

    private static final String NS = "flotilla";
    private static final String NAME = "flotilla-gateway-runtime";
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** The buckets' time stands still: a bucket refills only when the test says so (never, here). */
    private static final TimeMeter FROZEN = new TimeMeter() {
        @Override
        public long currentTimeNanos() {
            return 1_000_000_000L;
        }

        @Override
        public boolean isWallClockBased() {
            return false;
        }
    };

    private final CrudApiServer api = new CrudApiServer();
    private final KubernetesClient client = api.client();
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private final FlowPolicy policy = new FlowPolicy(Priority.STANDARD,
            Map.of("key-batch", new FlowPolicy.Tenant(Priority.BATCH, Priority.STANDARD, 1)), Duration.ofMinutes(15));
    private final KeyRateLimits limits = new KeyRateLimits(3, Duration.ofHours(1), null, "flotilla:", FROZEN,
            new LimitMetrics(new SimpleMeterRegistry()));

    @AfterEach
    void stopApi() {
        api.close();
    }

    private void write(Map<String, String> data) {
        client.configMaps().inNamespace(NS).resource(new ConfigMapBuilder().withNewMetadata().withName(NAME).endMetadata()
                .withData(data).build()).createOr(c -> c.update());
    }

    private double count(String outcome) {
        return registry.get("flotilla.gateway.runtime_config").tag("outcome", outcome).counter().count();
    }

    /** Requests key k may start now from a bucket of the current limit (the buckets' clock is frozen). */
    private int admitted(String key) {
        int n = 0;
        while (n < 100 && limits.tryAcquire(key).block().allowed()) {
            n++;
        }
        return n;
    }

    @Test
    void aChangedConfigMapChangesBandsAndTheRateLimitAndABadVersionChangesNothing() throws Exception {
        write(Map.of("default-priority", "batch", "tenants.key-batch.weight", "4"));
        try (RuntimeConfigMap watch = new RuntimeConfigMap(client, NS, NAME, policy, Optional.of(limits), registry).start(20)) {
            assertThat(policy.priority("anyone", null)).isEqualTo(Priority.BATCH);
            assertThat(policy.weight("key-batch")).isEqualTo(4);
            assertThat(admitted("key-a")).isEqualTo(3);

            write(Map.of("default-priority", "interactive", "tenants.key-batch.max-priority", "interactive",
                    "rate-limit.requests-per-period", "5", "rate-limit.period", "1m"));
            await().atMost(WAIT).until(() -> limits.perPeriod() == 5);
            assertThat(limits.period()).isEqualTo(Duration.ofMinutes(1));
            assertThat(admitted("key-a")).isEqualTo(5);                          // a fresh bucket of the new size
            assertThat(policy.priority("anyone", null)).isEqualTo(Priority.INTERACTIVE);
            assertThat(policy.priority("key-batch", "interactive")).isEqualTo(Priority.INTERACTIVE); // allowed now
            assertThat(policy.weight("key-batch")).isEqualTo(1);                 // taken out: the configured weight
            assertThat(count("applied")).isEqualTo(2);

            write(Map.of("default-priority", "standard", "rate-limit.requests-per-period", "0", "tenants.nobody.weight", "2"));
            await().atMost(WAIT).until(() -> count("rejected") == 1);
            assertThat(policy.priority("anyone", null)).isEqualTo(Priority.INTERACTIVE); // nothing of it applied
            assertThat(limits.perPeriod()).isEqualTo(5);

            client.configMaps().inNamespace(NS).withName(NAME).delete();
            await().atMost(WAIT).until(() -> policy.priority("anyone", null) == Priority.STANDARD);
            assertThat(policy.weight("key-batch")).isEqualTo(1);
            assertThat(limits.perPeriod()).isEqualTo(3); // the configured limit again
        }
    }

    @Test
    void rejectsUnknownKeysBadValuesAndARateLimitTheGatewayDoesNotHave() {
        RuntimeSettings configured = new RuntimeSettings(policy.bands(), Optional.empty());
        assertThat(catchRejected(Map.of("default-prio", "batch"), configured)).contains("unknown key 'default-prio'");
        assertThat(catchRejected(Map.of("default-priority", "urgent"), configured)).contains("'urgent' is not a band");
        assertThat(catchRejected(Map.of("tenants.key-batch.weight", "0"), configured))
                .contains("tenants.key-batch.weight: must be an integer >= 1");
        assertThat(catchRejected(Map.of("tenants.key-other.priority", "batch"), configured))
                .contains("flow 'key-other' is not in flotilla.gateway.flow.tenants");
        assertThat(catchRejected(Map.of("rate-limit.requests-per-period", "10"), configured))
                .contains("this gateway runs without a rate limit");
        RuntimeSettings limited = new RuntimeSettings(policy.bands(),
                Optional.of(new RuntimeSettings.RateLimit(3, Duration.ofSeconds(1))));
        assertThat(catchRejected(Map.of("rate-limit.period", "soon"), limited)).contains("must be a positive duration");
        assertThat(RuntimeSettings.parse(Map.of("rate-limit.period", "500ms"), limited).rate())
                .contains(new RuntimeSettings.RateLimit(3, Duration.ofMillis(500)));
    }

    private static String catchRejected(Map<String, String> data, RuntimeSettings configured) {
        try {
            RuntimeSettings.parse(data, configured);
        } catch (RuntimeSettings.Rejected e) {
            return e.getMessage();
        }
        throw new AssertionError("accepted " + data);
    }

    @Configuration(proxyBeanMethods = false)
    @EnableConfigurationProperties(GatewayProperties.class)
    static class Gateway {
        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }

        @Bean
        FlowPolicy flowPolicy() {
            return new FlowPolicy(Priority.STANDARD, Map.of(), Duration.ofMinutes(15));
        }
    }

    @Test
    void offByDefaultAndEnabledAppliedAtStart() {
        ApplicationContextRunner runner = new ApplicationContextRunner().withUserConfiguration(Gateway.class, KubernetesConfig.class)
                .withBean(KubernetesClient.class, () -> client, b -> b.setDestroyMethodName(""));
        runner.run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RuntimeConfigMap.class));
        ConfigMap cm = new ConfigMapBuilder().withNewMetadata().withName("bands").endMetadata()
                .addToData("default-priority", "batch").build();
        client.configMaps().inNamespace("ns1").resource(cm).create();
        runner.withPropertyValues("flotilla.gateway.kubernetes.enabled=true", "flotilla.gateway.kubernetes.namespace=ns1",
                "flotilla.gateway.kubernetes.config-map=bands").run(context -> {
            assertThat(context).hasNotFailed().hasSingleBean(RuntimeConfigMap.class);
            assertThat(context.getBean(FlowPolicy.class).priority("anyone", null)).isEqualTo(Priority.BATCH);
            assertThat(context.getBean(MeterRegistry.class).get("flotilla.gateway.runtime_config").tag("outcome", "applied")
                    .counter().count()).isEqualTo(1);
            client.configMaps().inNamespace("ns1").withName("bands").delete();
            await().atMost(WAIT).until(() -> context.getBean(FlowPolicy.class).priority("anyone", null) == Priority.STANDARD);
        });
    }
}
