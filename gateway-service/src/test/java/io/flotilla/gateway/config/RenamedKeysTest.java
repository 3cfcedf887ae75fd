package io.flotilla.gateway.config;

import org.junit.jupiter.api.Test;
import org.springframework.mock.env.MockEnvironment;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RenamedKeysTest {

    @Test
    void aRenamedKeyStopsStartUpNamingItsReplacement() {
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.gateway.admission.max-in-flight", "32")))
                .hasMessageContaining("flotilla.gateway.admission").hasMessageContaining("flotilla.gateway.flow");
        assertThatThrownBy(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.gateway.route-timeout", "1s")))
                .hasMessageContaining("route-deadline");
    }

    @Test
    void currentKeysPass() {
        assertThatCode(() -> RenamedKeys.check(new MockEnvironment()
                .withProperty("flotilla.gateway.flow.max-in-flight", "32"))).doesNotThrowAnyException();
    }
}
