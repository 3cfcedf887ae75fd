package io.flotilla.gateway.api;

import io.flotilla.gateway.anthropic.AnthropicErrors;
import io.flotilla.gateway.limits.KeyRateLimits;
import io.flotilla.gateway.metrics.TenantMetrics;
import io.flotilla.gateway.openai.ApiError;
import org.springframework.core.Ordered;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebFilterChain;
import reactor.core.publisher.Mono;

import java.security.Principal;
import java.time.Clock;
import java.time.Duration;

/**
 * Per-key rate limit on {@code /v1/**}: one token of the caller's bucket per request ({@link KeyRateLimits};
 * callers without a key share {@code anonymous}), shared by every gateway replica when the limits have a
 * store. A refused request gets 429 {@code rate_limit_error} / {@code rate_limited} with
 * {@code Retry-After} (until the bucket's next refill) and counts in the tenant's rejections. Every answer,
 * admitted or refused, carries the bucket's state in the rate-limit headers ({@link RateLimitHeaders}). Runs after
 * authentication, so only known keys get a bucket. No limits configured: not registered at all.
 */
final class RateLimitFilter implements WebFilter, Ordered {

    private final KeyRateLimits limits;
    private final TenantMetrics tenants;
    private final Clock clock;

    RateLimitFilter(KeyRateLimits limits, TenantMetrics tenants, Clock clock) {
        this.limits = limits;
        this.tenants = tenants;
        this.clock = clock;
    }

    @Override
    public int getOrder() {
        return FilterOrder.RATE_LIMIT;
    }

    @Override
    public Mono<Void> filter(ServerWebExchange exchange, WebFilterChain chain) {
        if (!exchange.getRequest().getPath().value().startsWith("/v1/")) {
            return chain.filter(exchange);
        }
        boolean anthropic = AnthropicErrors.anthropicPath(exchange.getRequest().getPath().value());
        return exchange.getPrincipal().map(Principal::getName).defaultIfEmpty("anonymous")
                .flatMap(key -> limits.tryAcquire(key).flatMap(d -> {
                    RateLimitHeaders.set(exchange.getResponse().getHeaders(), limits.perPeriod(), d, anthropic, clock);
                    if (d.allowed()) {
                        return chain.filter(exchange);
                    }
                    tenants.rejected(key, "rate_limited");
                    return Mono.error(ApiError.rateLimited("rate_limited", "Rate limit reached for " + key + ": "
                            + limits.perPeriod() + " requests per " + limits.period().toMillis() + " ms. Retry later.",
                            atLeastOneMs(d.retryAfter())));
                }));
    }

    private static Duration atLeastOneMs(Duration d) {
        return d.compareTo(Duration.ofMillis(1)) < 0 ? Duration.ofMillis(1) : d;
    }
}
