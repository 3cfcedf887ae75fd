package io.flotilla.gateway.metrics;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The {@code tenant} tag of a flow (API key id, or tenant without keys) on every per-tenant meter:
 * the flow itself when configured ({@code flow.tenants}) or among the first {@code extra} other flows
 * seen, else {@code other}. The tag takes at most configured + {@code extra} + 1 values whatever
 * callers send, so Prometheus series stay bounded.
 */
public final class TenantTags {

    public static final String OTHER = "other";

    private final Set<String> configured;
    private final int extra;
    private final Map<String, Boolean> seen = new ConcurrentHashMap<>();
    private final AtomicInteger taken = new AtomicInteger();

    public TenantTags(Set<String> configured, int extra) {
        this.configured = Set.copyOf(configured);
        this.extra = extra;
    }

    public String tag(String flow) {
        if (flow == null || flow.isEmpty()) {
            return OTHER;
        }
        if (configured.contains(flow)) {
            return flow;
        }
        Boolean own = seen.get(flow);
        if (own == null) {
            if (taken.get() >= extra) {
                return OTHER; // no new map entry once the tags are taken: the map stays bounded too
            }
            own = seen.computeIfAbsent(flow, f -> taken.incrementAndGet() <= extra);
        }
        return own ? flow : OTHER;
    }
}
