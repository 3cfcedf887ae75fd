package io.flotilla.gateway.config;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A rate limit a token bucket cannot count is refused by name when the settings bind, not by Bucket4j later. */
class RateLimitSettingsTest {

    @Test
    void aRateAboveOneRequestPerNanosecondOrWithoutAPeriodIsRefusedByName() {
        assertThatThrownBy(() -> new GatewayProperties.RateLimit(2_000_000, Duration.ofMillis(1)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("flotilla.gateway.rate-limit: 2000000 requests per PT0.001S is not a rate a token bucket can "
                        + "count (a positive period, at most one request per nanosecond)");
        assertThatThrownBy(() -> new GatewayProperties.RateLimit(10, Duration.ZERO)).hasMessageContaining("a positive period");
        assertThat(new GatewayProperties.RateLimit(0, Duration.ZERO).enabled()).as("off: nothing to count").isFalse();
        assertThat(new GatewayProperties.RateLimit(1_000_000_000, Duration.ofSeconds(1)).enabled()).isTrue();
    }
}
