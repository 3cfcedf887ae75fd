package io.flotilla.planner.core;

import io.flotilla.protocol.v1.PoolTargets;

import java.util.Collections;
import java.util.EnumMap;
import java.util.Map;
import java.util.Set;

/**
 * A replica count per pool, for the pools it names only: a pool that is absent is not managed (a
 * connector leaves it alone), which is different from a count of 0 (scale the pool to nothing).
 * Immutable.
 */
public final class PoolCounts {

    public static final PoolCounts NONE = new PoolCounts(new EnumMap<>(Pool.class));

    private final EnumMap<Pool, Integer> counts;

    private PoolCounts(EnumMap<Pool, Integer> counts) {
        this.counts = counts;
    }

    public static PoolCounts of(Map<Pool, Integer> counts) {
        EnumMap<Pool, Integer> m = new EnumMap<>(Pool.class);
        counts.forEach((p, n) -> m.put(p, check(n)));
        return new PoolCounts(m);
    }

    public static PoolCounts of(Pool pool, int n) {
        return NONE.with(pool, n);
    }

    public static PoolCounts of(Pool a, int na, Pool b, int nb) {
        return NONE.with(a, na).with(b, nb);
    }

    /** The counts of {@code pools}, all equal to {@code n}. */
    public static PoolCounts uniform(Set<Pool> pools, int n) {
        PoolCounts c = NONE;
        for (Pool p : pools) {
            c = c.with(p, n);
        }
        return c;
    }

    public boolean has(Pool pool) {
        return counts.containsKey(pool);
    }

    /** The count of {@code pool}, 0 when absent. */
    public int get(Pool pool) {
        return counts.getOrDefault(pool, 0);
    }

    public PoolCounts with(Pool pool, int n) {
        EnumMap<Pool, Integer> m = new EnumMap<>(Pool.class);
        m.putAll(counts);
        m.put(pool, check(n));
        return new PoolCounts(m);
    }

    public Set<Pool> pools() {
        return Collections.unmodifiableSet(counts.keySet());
    }

    public boolean isEmpty() {
        return counts.isEmpty();
    }

    public int total() {
        return counts.values().stream().mapToInt(Integer::intValue).sum();
    }

    public PoolTargets toProto() {
        return PoolTargets.newBuilder().setPrefill(get(Pool.PREFILL)).setDecode(get(Pool.DECODE))
                .setAggregated(get(Pool.AGGREGATED)).build();
    }

    /** Pool label → count, in pool order. */
    public Map<String, Integer> asLabelMap() {
        Map<String, Integer> m = new java.util.LinkedHashMap<>();
        counts.forEach((p, n) -> m.put(p.label(), n));
        return m;
    }

    private static int check(Integer n) {
        if (n == null || n < 0) {
            throw new IllegalArgumentException("replica counts are non-negative, got " + n);
        }
        return n;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof PoolCounts other && counts.equals(other.counts);
    }

    @Override
    public int hashCode() {
        return counts.hashCode();
    }

    @Override
    public String toString() {
        return asLabelMap().toString();
    }
}
