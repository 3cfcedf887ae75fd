package io.flotilla.gateway.limits;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * Meters of the shared limits ({@code limit} is {@code rate} or {@code in_flight}):
 * <ul>
 *   <li>{@code flotilla_gateway_limits_store_up} — 1 while the shared store may be used, 0 while the
 *       limits are counted by this gateway alone</li>
 *   <li>{@code flotilla_gateway_limits_store_seconds{limit,outcome}} — store calls (ok, failed), with a
 *       percentile histogram: what the shared limits cost a request</li>
 *   <li>{@code flotilla_gateway_limits_fallback_total{limit,reason}} — decisions taken locally because
 *       the store could not be used: {@code unavailable} (not connected, or skipped after failures),
 *       {@code timeout}, {@code error}</li>
 * </ul>
 */
public final class LimitMetrics {

    private final MeterRegistry registry;

    public LimitMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    void storeGauge(LimitStore store) {
        breaker(store.breaker());
        Gauge.builder("flotilla.gateway.limits.store.up", store, s -> s.up() ? 1 : 0)
                .description("1 while the shared limit store may be used, 0 while every gateway counts alone")
                .register(registry);
    }

    /** The breaker's state and calls as {@code resilience4j_circuitbreaker_*} (tag {@code name}). */
    void breaker(io.github.resilience4j.circuitbreaker.CircuitBreaker breaker) {
        new io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetricsPublisher(registry).publishMetrics(breaker);
    }

    void storeCall(String limit, String outcome, long nanos) {
        Timer.builder("flotilla.gateway.limits.store")
                .description("Calls to the shared limit store")
                .tag("limit", limit).tag("outcome", outcome)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(20_000))
                .maximumExpectedValue(Duration.ofSeconds(1))
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }

    void fallback(String limit, Throwable cause) {
        Counter.builder("flotilla.gateway.limits.fallback")
                .description("Limit decisions this gateway took alone because the shared store could not be used")
                .tag("limit", limit).tag("reason", reason(cause))
                .register(registry).increment();
    }

    /** Fallbacks so far of {@code limit}, all reasons (tests, actuator). */
    public double fallbacks(String limit) {
        return registry.find("flotilla.gateway.limits.fallback").tag("limit", limit).counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    static String reason(Throwable cause) {
        Throwable e = LimitStore.unwrap(cause);
        if (e instanceof LimitStore.StoreUnavailable) {
            return "unavailable";
        }
        if (e instanceof io.lettuce.core.RedisCommandTimeoutException || e instanceof java.util.concurrent.TimeoutException) {
            return "timeout";
        }
        return "error";
    }
}
