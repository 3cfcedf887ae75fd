package io.flotilla.router.core;

import java.util.Locale;

/**
 * How a decision was actually made; differs from the configured {@link Strategy} when the policy
 * degraded ({@code kv} without indexer answers uses {@link #KV_APPROX} or {@link #LOAD}). The shell
 * exports it as {@code flotilla_router_decisions_total{mode}} ({@link #metricTag()}).
 */
public enum ModeUsed {
    KV,
    KV_APPROX,
    LOAD,
    ROUND_ROBIN,
    RANDOM;

    /** Lower-case tag value: kv, kv_approx, load, round_robin, random. */
    public String metricTag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
