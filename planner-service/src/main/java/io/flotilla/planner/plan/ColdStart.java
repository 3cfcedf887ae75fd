package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Collection;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.Map;

/**
 * How long a scale-up really takes here, from the decision that raised a pool's target to the interval
 * in which that many replicas were READY: process or pod start, weight loading, engine warm-up and
 * registration together. Each replica a target adds is one pending start, completed when the pool's
 * READY count reaches it; the estimate for a pool is the longest of its last {@code keep} completed
 * starts, and the configured {@code prior} until one has completed.
 *
 * <p>The planner sizes for the load expected when new replicas become ready, so this is its lookahead:
 * a configured ready time longer than the real one starts replicas early (and pays for them idle), a
 * shorter one starts them late. Readiness is seen once per interval, so a measured start is rounded up
 * to the interval. Starts that were not the planner's (replicas added by hand) are not measured; a
 * start still pending after ten times the prior is dropped (the connector could not start it).
 */
final class ColdStart {

    private record Pending(Instant since, int level) {
    }

    private final Duration prior;
    private final int keep;
    private final Map<Pool, ArrayDeque<Pending>> pending = new EnumMap<>(Pool.class);
    private final Map<Pool, ArrayDeque<Duration>> measured = new EnumMap<>(Pool.class);

    ColdStart(Duration prior, int keep) {
        if (prior.isNegative() || keep < 1) {
            throw new IllegalArgumentException("prior >= 0 and keep >= 1 required, got " + prior + ", " + keep);
        }
        this.prior = prior;
        this.keep = keep;
    }

    /** The pool has {@code ready} READY replicas at {@code now}: every start up to that count completed. */
    void ready(Pool pool, int ready, Instant now) {
        ArrayDeque<Pending> starts = pending.get(pool);
        if (starts == null) {
            return;
        }
        for (Iterator<Pending> it = starts.iterator(); it.hasNext(); ) {
            Pending s = it.next();
            if (s.level() <= ready) {
                ArrayDeque<Duration> m = measured.computeIfAbsent(pool, p -> new ArrayDeque<>());
                m.addLast(Duration.between(s.since(), now));
                if (m.size() > keep) {
                    m.removeFirst();
                }
                it.remove();
            } else if (Duration.between(s.since(), now).compareTo(prior.multipliedBy(10)) > 0) {
                it.remove();
            }
        }
    }

    /**
     * The planner moved the pool's target from {@code from} to {@code to} at {@code now}, with
     * {@code ready} replicas READY: each replica above both {@code from} and {@code ready} is a new
     * start; a lower target cancels the starts above it.
     */
    void target(Pool pool, int from, int to, int ready, Instant now) {
        ArrayDeque<Pending> starts = pending.computeIfAbsent(pool, p -> new ArrayDeque<>());
        starts.removeIf(s -> s.level() > to);
        for (int level = Math.max(from, ready) + 1; level <= to; level++) {
            starts.addLast(new Pending(now, level));
        }
    }

    /** The pool's cold start: the longest of its recent measured starts, or the prior. */
    Duration estimate(Pool pool) {
        ArrayDeque<Duration> m = measured.get(pool);
        return m == null || m.isEmpty() ? prior : m.stream().max(Duration::compareTo).orElseThrow();
    }

    /** The longest cold start among {@code pools}: the lookahead that covers every one of them. */
    Duration estimate(Collection<Pool> pools) {
        return pools.stream().map(this::estimate).max(Duration::compareTo).orElse(prior);
    }

    /** Whether {@code pool}'s estimate comes from measured starts. */
    boolean measured(Pool pool) {
        ArrayDeque<Duration> m = measured.get(pool);
        return m != null && !m.isEmpty();
    }
}
