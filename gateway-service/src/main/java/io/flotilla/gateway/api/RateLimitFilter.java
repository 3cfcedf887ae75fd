package io.flotilla.gateway.api;

import io.flotilla.gateway.openai.ApiError;
import io.github.resilience4j.ratelimiter.RateLimiter;
import io.github.resilience4j.ratelimiter.RateLimiterConfig;
import io.github.resilience4j.ratelimiter.RateLimiterRegistry;
import io.github.resilience4j.ratelimiter.RequestNotPermitted;
import io.github.resilience4j.ratelimiter.internal.AtomicRateLimiter;
import io.github.resilience4j.reactor.ratelimiter.operator.RateLimiterOperator;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.security.Principal;
import java.time.Duration;

/**
 * Per-key rate limit on {@code /v1/**}: one Resilience4j {@link RateLimiter} per API key id (callers
 * without a key share {@code anonymous}), {@code requestsPerPeriod} permits per {@code period}, no
 * waiting. A refused request gets 429 {@code rate_limit_error} with {@code Retry-After} (the time
 * until the limiter refreshes). Runs after authentication, so only known keys get a limiter.
 * {@code requestsPerPeriod == 0} turns it off.
 */
final class RateLimitFilter implements WebFilter, Ordered {

    private final RateLimiterRegistry limiters;
    private final int requestsPerPeriod;
    private final Duration period;

    RateLimitFilter(int requestsPerPeriod, Duration period) {
        this.requestsPerPeriod = requestsPerPeriod;
        this.period = period;
        this.limiters = RateLimiterRegistry.of(RateLimiterConfig.custom()
                .limitForPeriod(Math.max(1, requestsPerPeriod))
                .limitRefreshPeriod(period)
                .timeoutDuration(Duration.ZERO)
                .build());
    }

    @Override
    public int getOrder() {
        return FilterOrder.RATE_LIMIT;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (requestsPerPeriod == 0 || !exchange.getRequest().getPath().value().startsWith("/v1/")) {
            return chain.filter(exchange);
        }
        return exchange.getPrincipal().map(Principal::getName).defaultIfEmpty("anonymous").flatMap(key -> {
            RateLimiter limiter = limiters.rateLimiter(key);
            return chain.filter(exchange)
                    .transformDeferred(RateLimiterOperator.of(limiter))
                    .onErrorMap(RequestNotPermitted.class, e -> ApiError.rateLimited("rate_limited",
                            "Rate limit reached for " + key + ": " + requestsPerPeriod + " requests per "
                                    + period.toMillis() + " ms. Retry later.", retryAfter(limiter)));
        });
    }

    private Duration retryAfter(RateLimiter limiter) {
        if (limiter.getMetrics() instanceof AtomicRateLimiter.AtomicRateLimiterMetrics metrics
                && metrics.getNanosToWait() > 0) {
            return Duration.ofNanos(metrics.getNanosToWait());
        }
        return period;
    }
}
