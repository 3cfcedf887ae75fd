package io.flotilla.gateway.api;

import io.flotilla.gateway.limits.KeyRateLimits;
import org.springframework.http.HttpHeaders;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;

/**
 * The per-key rate limit as response headers, after each decision: OpenAI's
 * {@code x-ratelimit-limit-requests}, {@code x-ratelimit-remaining-requests} and
 * {@code x-ratelimit-reset-requests} (time until the bucket is full again, as OpenAI writes it:
 * {@code 250ms}, {@code 1.5s}, {@code 1m0s}) on every {@code /v1} response, and on Anthropic's paths also
 * {@code anthropic-ratelimit-requests-limit}, {@code -remaining} and {@code -reset} (the instant it is full
 * again, RFC 3339). There are no {@code -tokens} headers: the gateway limits requests, not tokens.
 */
final class RateLimitHeaders {

    static final String LIMIT = "x-ratelimit-limit-requests";
    static final String REMAINING = "x-ratelimit-remaining-requests";
    static final String RESET = "x-ratelimit-reset-requests";
    static final String ANTHROPIC_LIMIT = "anthropic-ratelimit-requests-limit";
    static final String ANTHROPIC_REMAINING = "anthropic-ratelimit-requests-remaining";
    static final String ANTHROPIC_RESET = "anthropic-ratelimit-requests-reset";

    private RateLimitHeaders() {
    }

    static void set(HttpHeaders headers, int limit, KeyRateLimits.Decision d, boolean anthropic, Clock clock) {
        headers.set(LIMIT, Integer.toString(limit));
        headers.set(REMAINING, Long.toString(d.remaining()));
        headers.set(RESET, duration(d.reset()));
        if (anthropic) {
            headers.set(ANTHROPIC_LIMIT, Integer.toString(limit));
            headers.set(ANTHROPIC_REMAINING, Long.toString(d.remaining()));
            Instant full = clock.instant().plus(d.reset()).truncatedTo(ChronoUnit.SECONDS).plusSeconds(d.reset().isZero() ? 0 : 1);
            headers.set(ANTHROPIC_RESET, DateTimeFormatter.ISO_INSTANT.format(full));
        }
    }

    /** Go's duration format, which OpenAI's headers use, rounded up to the millisecond. */
    static String duration(Duration d) {
        long ms = (d.toNanos() + 999_999) / 1_000_000;
        if (ms < 1000) {
            return ms + "ms";
        }
        long hours = ms / 3_600_000;
        long minutes = ms / 60_000 % 60;
        String seconds = java.math.BigDecimal.valueOf(ms % 60_000, 3).stripTrailingZeros().toPlainString();
        if (hours > 0) {
            return hours + "h" + minutes + "m" + seconds + "s";
        }
        return minutes > 0 ? minutes + "m" + seconds + "s" : seconds + "s";
    }
}
