package io.flotilla.gateway.limits;

import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.flow.TenantGate;
import io.flotilla.gateway.metrics.TenantMetrics;
import io.flotilla.gateway.metrics.TenantTags;
import io.github.bucket4j.TimeMeter;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import reactor.core.scheduler.Schedulers;

import java.util.Map;
import java.util.UUID;

/**
 * The limits and the per-tenant meters: the shared store when {@code flotilla.gateway.limits.redis-uri}
 * is set (with its {@code limits} health component, outside readiness: the gateway serves without it),
 * the per-key rate limit when one is configured, and the per-flow in-flight gate of flow control.
 */
@Configuration(proxyBeanMethods = false)
class LimitsConfig {

    @Bean
    LimitMetrics limitMetrics(MeterRegistry registry) {
        return new LimitMetrics(registry);
    }

    @Bean(destroyMethod = "close")
    @Conditional(LimitConditions.Store.class)
    LimitStore limitStore(GatewayProperties properties, LimitMetrics metrics) {
        GatewayProperties.Limits l = properties.limits();
        return new LimitStore(l.redisUri().strip(), l.timeout(), l.connectTimeout(), l.openFor(), metrics);
    }

    /** {@code limits}: UP while the shared store may be used; DOWN (limits counted per gateway, fail-open) otherwise. */
    @Bean
    @Conditional(LimitConditions.Store.class)
    HealthIndicator limitsHealthIndicator(LimitStore store) {
        return () -> (store.up() ? Health.up() : Health.down()).withDetails(store.details()).build();
    }

    /** The per-key rate limit, when {@code rate-limit.requests-per-period} is positive. */
    @Bean
    @Conditional(LimitConditions.RateLimit.class)
    KeyRateLimits keyRateLimits(GatewayProperties properties, ObjectProvider<LimitStore> store, LimitMetrics metrics) {
        GatewayProperties.RateLimit r = properties.rateLimit();
        return new KeyRateLimits(r.requestsPerPeriod(), r.period(), store.getIfAvailable(), properties.limits().keyPrefix(),
                TimeMeter.SYSTEM_MILLISECONDS, metrics);
    }

    @Bean
    TenantTags tenantTags(GatewayProperties properties) {
        return new TenantTags(properties.flow().tenants().keySet(), properties.metrics().tenantTags());
    }

    @Bean
    TenantMetrics tenantMetrics(MeterRegistry registry, TenantTags tags) {
        return new TenantMetrics(registry, tags);
    }

    /** Flow control's per-flow in-flight limit; {@link TenantGate#NONE} when no flow has one. */
    @Bean(destroyMethod = "")
    TenantGate tenantGate(GatewayProperties properties, ObjectProvider<LimitStore> store, LimitMetrics metrics) {
        GatewayProperties.Flow f = properties.flow();
        Map<String, GatewayProperties.Tenant> tenants = f.tenants();
        boolean any = f.tenantMaxInFlight() > 0
                || tenants.values().stream().anyMatch(t -> t.maxInFlight() != null && t.maxInFlight() > 0);
        if (!any) {
            return TenantGate.NONE;
        }
        GatewayProperties.Limits l = properties.limits();
        return new TenantInFlight(flow -> {
            GatewayProperties.Tenant t = tenants.get(flow);
            return t != null && t.maxInFlight() != null ? t.maxInFlight() : f.tenantMaxInFlight();
        }, store.getIfAvailable(), l.keyPrefix(), l.leaseTtl(), l.recheck(),
                "gw-" + UUID.randomUUID().toString().substring(0, 12), Schedulers.parallel(), metrics);
    }
}
