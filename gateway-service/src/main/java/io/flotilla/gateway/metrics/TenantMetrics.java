package io.flotilla.gateway.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Per-tenant meters, tagged {@code tenant} by {@link TenantTags} (bounded) and {@code model} (served
 * models or {@code unknown}):
 * <ul>
 *   <li>{@code flotilla_gateway_tenant_requests_total{tenant,model,outcome}} — finished requests</li>
 *   <li>{@code flotilla_gateway_tenant_tokens_total{tenant,model,kind}} — {@code prompt} and
 *       {@code completion} tokens</li>
 *   <li>{@code flotilla_gateway_tenant_cached_tokens_total{tenant,model}} — prompt tokens served from a
 *       KV cache, and {@code flotilla_gateway_tenant_cache_hits_total{tenant,model}}, requests with any</li>
 *   <li>{@code flotilla_gateway_tenant_rejections_total{tenant,reason}} — requests refused for load:
 *       {@code rate_limited}, {@code queue_full}, {@code queue_timeout}, {@code queue_displaced}</li>
 * </ul>
 */
public final class TenantMetrics {

    private final MeterRegistry registry;
    private final TenantTags tags;

    public TenantMetrics(MeterRegistry registry, TenantTags tags) {
        this.registry = registry;
        this.tags = tags;
    }

    public TenantTags tags() {
        return tags;
    }

    /** One finished request of {@code flow}; {@code rejection} is its load-shedding code, or null. */
    public void finished(String flow, String model, String outcome, int promptTokens, int completionTokens,
                         int cachedTokens, String rejection) {
        String tenant = tags.tag(flow);
        Counter.builder("flotilla.gateway.tenant.requests").description("Finished requests per tenant")
                .tags("tenant", tenant, "model", model, "outcome", outcome).register(registry).increment();
        if (promptTokens > 0) {
            tokens(tenant, model, "prompt").increment(promptTokens);
        }
        if (completionTokens > 0) {
            tokens(tenant, model, "completion").increment(completionTokens);
        }
        if (cachedTokens > 0) {
            Counter.builder("flotilla.gateway.tenant.cached.tokens").description("Prompt tokens per tenant served from a KV cache")
                    .tags("tenant", tenant, "model", model).register(registry).increment(cachedTokens);
            Counter.builder("flotilla.gateway.tenant.cache.hits").description("Requests per tenant with cached prompt tokens")
                    .tags("tenant", tenant, "model", model).register(registry).increment();
        }
        if (rejection != null) {
            rejected(flow, rejection);
        }
    }

    /** A request of {@code flow} refused for load ({@code rate_limited}, {@code queue_full}, …). */
    public void rejected(String flow, String reason) {
        Counter.builder("flotilla.gateway.tenant.rejections").description("Requests per tenant refused for load")
                .tags("tenant", tags.tag(flow), "reason", reason).register(registry).increment();
    }

    private Counter tokens(String tenant, String model, String kind) {
        return Counter.builder("flotilla.gateway.tenant.tokens").description("Tokens per tenant")
                .tags("tenant", tenant, "model", model, "kind", kind).register(registry);
    }
}
