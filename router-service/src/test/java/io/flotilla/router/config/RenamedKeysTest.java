package io.flotilla.router.config;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.mock.env.MockEnvironment;

class RenamedKeysTest {

    private static MockEnvironment variables(Map<String, Object> env) {
        MockEnvironment environment = new MockEnvironment();
        environment.getPropertySources().addLast(
                new SystemEnvironmentPropertySource(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME, env));
        return environment;
    }

    @Test
    void aRenamedKeyStopsStartUpNamingItsReplacement() {
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.router.weight-queue", "0")))
                .hasMessageContaining("flotilla.router.weight-queue became flotilla.router.weights.queue");
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.router.indexer-deadline", "20ms")))
                .hasMessageContaining("flotilla.router.indexer-deadline became flotilla.router.indexer.deadline.fixed");
    }

    @Test
    void everyOldKeySetIsNamedInCamelCaseAndAsAList() {
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.router.candidateLeastLoaded", "4")
                .withProperty("flotilla.router.indexer-addresses[0]", "a:7002")))
                .hasMessageContaining("flotilla.router.candidate-least-loaded became flotilla.router.candidates.least-loaded")
                .hasMessageContaining("flotilla.router.indexer-addresses became flotilla.router.indexer.addresses");
    }

    @Test
    void anOldKeyBesideItsReplacementStillStopsStartUp() {
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.router.sequence-ttl", "1m")
                .withProperty("flotilla.router.sequences.ttl", "2m")))
                .hasMessageContaining("flotilla.router.sequence-ttl became flotilla.router.sequences.ttl");
    }

    @Test
    void anOldEnvironmentVariableStopsStartUp() {
        assertThatThrownBy(() -> RenamedKeys.check(variables(Map.of("FLOTILLA_ROUTER_WEIGHT_PREFILL", "2"))))
                .hasMessageContaining("flotilla.router.weight-prefill became flotilla.router.weights.prefill");
        assertThatThrownBy(() -> RenamedKeys.check(variables(Map.of("FLOTILLA_ROUTER_INDEXERADDRESS", "i:7002"))))
                .hasMessageContaining("flotilla.router.indexer-address became flotilla.router.indexer.address");
    }

    @Test
    void currentKeysPass() {
        assertThatCode(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.router.weights.queue", "0")
                .withProperty("flotilla.router.indexer.deadline.min", "2ms")
                .withProperty("flotilla.router.indexer.addresses[0]", "a:7002")
                .withProperty("flotilla.router.mode", "load"))).doesNotThrowAnyException();
    }

    @Test
    void aVariableThatNamesTheNewKeyAsWellPasses() {
        assertThatCode(() -> RenamedKeys.check(variables(Map.of(
                "FLOTILLA_ROUTER_INDEXER_ADDRESS", "i:7002",
                "FLOTILLA_ROUTER_INDEXER_DEADLINE_MIN", "2ms",
                "FLOTILLA_ROUTER_INDEXER_ADDRESSES_0", "a:7002",
                "FLOTILLA_ROUTER_CAPACITY_HEARTBEAT", "1s",
                "FLOTILLA_ROUTER_WEIGHTS_PREFILL", "2")))).doesNotThrowAnyException();
    }
}
