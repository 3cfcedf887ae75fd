package io.flotilla.router.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.flotilla.router.client.DeadlineEstimator;
import io.flotilla.router.core.PolicySpec;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.Strategy;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** The router's settings as Spring binds them, and the routing core's configuration they produce. */
class RouterPropertiesTest {

    private static RouterProperties bind(Map<String, String> props) {
        return new Binder(new MapConfigurationPropertySource(props)).bindOrCreate("flotilla.router", RouterProperties.class);
    }

    @Test
    void settingsWithoutAKeyTakeTheCoresConstants() {
        RouterConfig c = bind(Map.of()).routingConfig();
        assertThat(c.loadMerge()).isEqualTo(io.flotilla.router.core.LoadMerge.DELTA);
        assertThat(c.busy().retryAfterMs()).isEqualTo(RouterConfig.Busy.RETRY_AFTER_MS);
        assertThat(c.busy().maxRetryAfterMs()).isEqualTo(RouterConfig.Busy.MAX_RETRY_AFTER_MS);
        assertThat(c.approx().maxEntries()).isEqualTo(RouterConfig.Approx.MAX_ENTRIES);
        assertThat(c.policies()).as("no policy section: the standard formula").isEmpty();
    }

    @Test
    void everyRoutingKeyReachesTheCoreConfig() {
        RouterConfig c = bind(Map.of(
                "flotilla.router.mode", "load",
                "flotilla.router.weights.prefill", "2",
                "flotilla.router.weights.decode", "0.5",
                "flotilla.router.weights.queue", "0",
                "flotilla.router.temperature", "0.3",
                "flotilla.router.busy.prefill-fraction", "0",
                "flotilla.router.busy.decode-fraction", "0.5",
                "flotilla.router.disagg-min-uncached-tokens", "64",
                "flotilla.router.sequences.ttl", "1m",
                "flotilla.router.sequences.approx-ttl", "30s")).routingConfig();
        assertThat(c.strategy()).isEqualTo(Strategy.LOAD);
        assertThat(c.weights()).isEqualTo(new RouterConfig.Weights(2, 0.5, 0));
        assertThat(c.temperature()).isEqualTo(0.3);
        assertThat(c.busy().prefillTokens()).as("0 disables").isEqualTo(RouterConfig.Threshold.DISABLED);
        assertThat(c.busy().decodeBlocks()).isEqualTo(RouterConfig.Threshold.fraction(0.5));
        assertThat(c.disagg().minUncachedTokens()).isEqualTo(64);
        assertThat(c.sequenceTtl()).isEqualTo(Duration.ofMinutes(1));
        assertThat(c.approx().ttl()).isEqualTo(Duration.ofSeconds(30));
        assertThat(bind(Map.of("flotilla.router.candidates.pruning", "false",
                "flotilla.router.candidates.least-loaded", "4")).routingConfig().pruning())
                .isEqualTo(new RouterConfig.Pruning(false, 4));
    }

    @Test
    void theIndexerGroupGivesItsAddressesAndDeadline() {
        RouterProperties.Indexer one = bind(Map.of(
                "flotilla.router.indexer.address", "i:7002",
                "flotilla.router.indexer.deadline.min", "2ms",
                "flotilla.router.indexer.deadline.max", "80ms",
                "flotilla.router.indexer.deadline.quantile", "0.9",
                "flotilla.router.indexer.deadline.margin", "2",
                "flotilla.router.indexer.deadline.window", "3s")).indexer();
        assertThat(one.all()).containsExactly("i:7002");
        assertThat(one.deadline().settings()).isEqualTo(new DeadlineEstimator.Settings(Duration.ofMillis(2),
                Duration.ofMillis(80), 0.9, 2, 3, DeadlineEstimator.Settings.MIN_SAMPLES));
        assertThat(one.deadline().stake()).as("the default stake")
                .isEqualTo(new DeadlineEstimator.Stake(0.2, Duration.ofMillis(250)));
        assertThat(bind(Map.of("flotilla.router.indexer.deadline.stake-share", "0.5",
                "flotilla.router.indexer.deadline.stake-max", "1s")).indexer().deadline().stake())
                .isEqualTo(new DeadlineEstimator.Stake(0.5, Duration.ofSeconds(1)));

        RouterProperties.Indexer shards = bind(Map.of(
                "flotilla.router.indexer.addresses", "a:7002,b:7021",
                "flotilla.router.indexer.deadline.fixed", "200ms")).indexer();
        assertThat(shards.all()).as("the shards, not the default address").containsExactly("a:7002", "b:7021");
        assertThat(shards.deadline().settings()).isEqualTo(DeadlineEstimator.Settings.fixed(Duration.ofMillis(200)));
        assertThat(shards.deadline().stake()).as("a fixed deadline is that deadline for every call")
                .isEqualTo(DeadlineEstimator.Stake.NONE);
    }

    @Test
    void theCapacityStreamsPacingBinds() {
        RouterProperties.Capacity capacity = bind(Map.of(
                "flotilla.router.capacity.coalesce", "0ms",
                "flotilla.router.capacity.heartbeat", "1s")).capacity();
        assertThat(capacity).isEqualTo(new RouterProperties.Capacity(Duration.ZERO, Duration.ofSeconds(1), 0.1));
        assertThat(bind(Map.of("flotilla.router.capacity.max-share", "0.25")).capacity().maxShare()).isEqualTo(0.25);
    }

    @Test
    void policySectionsBindPerModelAndTheDefaultSection() {
        RouterConfig c = bind(Map.of(
                "flotilla.router.policy.default.scorers.lora-eviction", "1",
                "flotilla.router.policy.[meta-llama/Llama-3.1-8B].scorers.queue", "2",
                "flotilla.router.policy.[meta-llama/Llama-3.1-8B].filters", "eligible,lora")).routingConfig();
        assertThat(c.policies()).containsOnlyKeys(PolicySpec.DEFAULT, "meta-llama/Llama-3.1-8B");
        assertThat(c.policies().get(PolicySpec.DEFAULT).scorers()).containsExactly(Map.entry("lora-eviction", 1.0));
        assertThat(c.policies().get("meta-llama/Llama-3.1-8B"))
                .isEqualTo(new PolicySpec.Section(List.of("eligible", "lora"), Map.of("queue", 2.0)));
    }
}
