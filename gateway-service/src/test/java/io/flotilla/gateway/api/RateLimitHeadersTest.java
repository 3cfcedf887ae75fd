package io.flotilla.gateway.api;

import io.flotilla.gateway.limits.KeyRateLimits;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/** The rate-limit headers' values, as OpenAI's and Anthropic's clients read them. */
class RateLimitHeadersTest {

    @ParameterizedTest(name = "{0} ns -> {1}")
    @CsvSource({
            "0,               0ms",
            "1,               1ms",
            "250000000,       250ms",
            "1000000000,      1s",
            "1500000000,      1.5s",
            "60000000000,     1m0s",
            "90250000000,     1m30.25s",
            "3723000000000,   1h2m3s",
    })
    void resetIsAGoDurationRoundedUpToTheMillisecond(long nanos, String expected) {
        assertThat(RateLimitHeaders.duration(Duration.ofNanos(nanos))).isEqualTo(expected);
    }

    @Test
    void anthropicPathsAlsoGetAnthropicsNamesWithAnInstant() {
        Clock clock = Clock.fixed(Instant.parse("2026-01-02T03:04:05.600Z"), ZoneOffset.UTC);
        KeyRateLimits.Decision d = new KeyRateLimits.Decision(true, Duration.ZERO, 7, Duration.ofMillis(2500));
        HttpHeaders openAi = new HttpHeaders();
        RateLimitHeaders.set(openAi, 10, d, false, clock);
        assertThat(openAi.toSingleValueMap()).containsOnly(
                java.util.Map.entry("x-ratelimit-limit-requests", "10"),
                java.util.Map.entry("x-ratelimit-remaining-requests", "7"),
                java.util.Map.entry("x-ratelimit-reset-requests", "2.5s"));
        HttpHeaders anthropic = new HttpHeaders();
        RateLimitHeaders.set(anthropic, 10, d, true, clock);
        assertThat(anthropic.getFirst("anthropic-ratelimit-requests-limit")).isEqualTo("10");
        assertThat(anthropic.getFirst("anthropic-ratelimit-requests-remaining")).isEqualTo("7");
        assertThat(anthropic.getFirst("anthropic-ratelimit-requests-reset")).isEqualTo("2026-01-02T03:04:09Z");
        assertThat(anthropic.getFirst("x-ratelimit-remaining-requests")).isEqualTo("7");
    }
}
