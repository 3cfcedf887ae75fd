package io.flotilla.router.core;

import io.flotilla.protocol.v1.RoutingMode;

import java.util.Locale;

/**
 * How a decision was actually made; differs from the configured {@link Strategy} when the policy
 * degraded ({@code kv} without indexer answers uses {@link #KV_APPROX} or {@link #LOAD}). The shell
 * exports it as {@code flotilla_router_decisions_total{mode}} ({@link #metricTag()}).
 */
public enum ModeUsed {
    KV(RoutingMode.ROUTING_MODE_KV),
    KV_APPROX(RoutingMode.ROUTING_MODE_KV_APPROX),
    LOAD(RoutingMode.ROUTING_MODE_LOAD),
    ROUND_ROBIN(RoutingMode.ROUTING_MODE_ROUND_ROBIN),
    RANDOM(RoutingMode.ROUTING_MODE_RANDOM);

    private final RoutingMode proto;

    ModeUsed(RoutingMode proto) {
        this.proto = proto;
    }

    public RoutingMode toProto() {
        return proto;
    }

    /** Lower-case tag value: kv, kv_approx, load, round_robin, random. */
    public String metricTag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
