package io.flotilla.router.core;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the pure routing core is configured with; {@code RouterProperties.routingConfig()}
 * produces it from the service's settings, whose {@code @DefaultValue}s are the one place defaults are
 * written (the core's tests bind an empty environment to get them). What has no property key is stated
 * here once: {@link Busy#RETRY_AFTER_MS} and its clamp, {@link Approx#MAX_ENTRIES}.
 *
 * @param strategy    kv | load | round-robin | random
 * @param weights     w_prefill, w_decode, w_queue of the cost formula
 * @param temperature 0 picks the minimum cost; &gt; 0 samples softmax over normalised costs
 * @param loadMerge   how load reports and bookings combine
 * @param busy        busy thresholds and retry-after hint
 * @param disagg      prefill/decode pairing
 * @param sequenceTtl bookings not touched for this long are forgotten
 * @param approx      the router's own approximate prefix index
 * @param pruning     which workers a greedy decision scores (all, or holders plus the least loaded)
 * @param policies    policy sections by model ({@link PolicySpec#DEFAULT} for every model): filters and
 *                    scorer weights on top of the standard formula
 */
public record RouterConfig(Strategy strategy, Weights weights, double temperature, LoadMerge loadMerge,
                           Busy busy, Disagg disagg, Duration sequenceTtl, Approx approx, Pruning pruning,
                           Map<String, PolicySpec.Section> policies) {

    /** Without policy sections: every model routes by the standard formula. */
    public RouterConfig(Strategy strategy, Weights weights, double temperature, LoadMerge loadMerge,
                        Busy busy, Disagg disagg, Duration sequenceTtl, Approx approx, Pruning pruning) {
        this(strategy, weights, temperature, loadMerge, busy, disagg, sequenceTtl, approx, pruning, Map.of());
    }

    public RouterConfig {
        Objects.requireNonNull(strategy, "strategy");
        Objects.requireNonNull(weights, "weights");
        Objects.requireNonNull(loadMerge, "loadMerge");
        Objects.requireNonNull(busy, "busy");
        Objects.requireNonNull(disagg, "disagg");
        Objects.requireNonNull(approx, "approx");
        Objects.requireNonNull(pruning, "pruning");
        policies = policies == null ? Map.of() : Map.copyOf(policies);
        if (!(temperature >= 0) || Double.isInfinite(temperature)) {
            throw new IllegalArgumentException("temperature must be finite and >= 0");
        }
        if (sequenceTtl == null || sequenceTtl.isNegative() || sequenceTtl.isZero()) {
            throw new IllegalArgumentException("sequence TTL must be positive");
        }
    }

    public RouterConfig withStrategy(Strategy s) {
        return new RouterConfig(s, weights, temperature, loadMerge, busy, disagg, sequenceTtl, approx, pruning, policies);
    }

    public RouterConfig withWeights(Weights w) {
        return new RouterConfig(strategy, w, temperature, loadMerge, busy, disagg, sequenceTtl, approx, pruning, policies);
    }

    public RouterConfig withTemperature(double t) {
        return new RouterConfig(strategy, weights, t, loadMerge, busy, disagg, sequenceTtl, approx, pruning, policies);
    }

    public RouterConfig withLoadMerge(LoadMerge m) {
        return new RouterConfig(strategy, weights, temperature, m, busy, disagg, sequenceTtl, approx, pruning, policies);
    }

    public RouterConfig withBusy(Busy b) {
        return new RouterConfig(strategy, weights, temperature, loadMerge, b, disagg, sequenceTtl, approx, pruning, policies);
    }

    public RouterConfig withPruning(Pruning p) {
        return new RouterConfig(strategy, weights, temperature, loadMerge, busy, disagg, sequenceTtl, approx, p, policies);
    }

    public RouterConfig withPolicies(Map<String, PolicySpec.Section> p) {
        return new RouterConfig(strategy, weights, temperature, loadMerge, busy, disagg, sequenceTtl, approx, pruning, p);
    }

    public RouterConfig withDisagg(Disagg d) {
        return new RouterConfig(strategy, weights, temperature, loadMerge, busy, d, sequenceTtl, approx, pruning, policies);
    }

    /** Weights of the cost formula's three terms; each finite and ≥ 0 (0 drops the term). */
    public record Weights(double prefill, double decode, double queue) {
    }

    /**
     * A per-worker limit, absolute or as a fraction of the worker's capacity. A fraction of an unknown
     * capacity (0) never trips.
     */
    public record Threshold(Kind kind, double value) {
        public enum Kind { DISABLED, ABSOLUTE, FRACTION }

        public static final Threshold DISABLED = new Threshold(Kind.DISABLED, 0);

        public Threshold {
            Objects.requireNonNull(kind, "kind");
            if (!(value >= 0) || Double.isInfinite(value)) {
                throw new IllegalArgumentException("threshold must be finite and >= 0");
            }
        }

        public static Threshold absolute(double v) {
            return new Threshold(Kind.ABSOLUTE, v);
        }

        public static Threshold fraction(double f) {
            return new Threshold(Kind.FRACTION, f);
        }

        /** The limit for a worker of {@code capacity}; {@code Double.POSITIVE_INFINITY} when none. */
        public double limit(long capacity) {
            return switch (kind) {
                case DISABLED -> Double.POSITIVE_INFINITY;
                case ABSOLUTE -> value;
                case FRACTION -> capacity > 0 ? value * capacity : Double.POSITIVE_INFINITY;
            };
        }
    }

    /**
     * A worker is busy when its queued prefill tokens exceed {@code prefillTokens} (capacity: KV blocks ×
     * block size, in tokens) or its decode blocks exceed {@code decodeBlocks} (capacity: KV blocks).
     *
     * @param prefillTokens    a limit on queued prefill tokens
     * @param decodeBlocks     a limit on decode blocks in use
     * @param retryAfterMs     hint when no drain time can be estimated
     * @param minRetryAfterMs  lower clamp of the hint
     * @param maxRetryAfterMs  upper clamp of the hint
     */
    public record Busy(Threshold prefillTokens, Threshold decodeBlocks, long retryAfterMs, long minRetryAfterMs,
                       long maxRetryAfterMs) {
        /** The retry-after hint when no drain time can be estimated, and its clamp (no property key). */
        public static final long RETRY_AFTER_MS = 1000;
        public static final long MIN_RETRY_AFTER_MS = 100;
        public static final long MAX_RETRY_AFTER_MS = 30_000;
        public static final Busy NEVER = new Busy(Threshold.DISABLED, Threshold.DISABLED);

        /** These thresholds with the standard retry-after hint and clamp. */
        public Busy(Threshold prefillTokens, Threshold decodeBlocks) {
            this(prefillTokens, decodeBlocks, RETRY_AFTER_MS, MIN_RETRY_AFTER_MS, MAX_RETRY_AFTER_MS);
        }

        public Busy {
            Objects.requireNonNull(prefillTokens, "prefillTokens");
            Objects.requireNonNull(decodeBlocks, "decodeBlocks");
            if (minRetryAfterMs < 0 || maxRetryAfterMs < minRetryAfterMs) {
                throw new IllegalArgumentException("retry-after clamp must satisfy 0 <= min <= max");
            }
        }
    }

    /**
     * @param minUncachedTokens a separate prefill worker is named only when the prompt's uncached part
     *                          on the chosen prefill worker exceeds this
     */
    public record Disagg(int minUncachedTokens) {
    }

    /**
     * @param ttl        how long a routed prefix is assumed to stay cached on its worker
     * @param maxEntries bound on (block, worker) entries; the least recently routed go first
     */
    public record Approx(Duration ttl, int maxEntries) {
        /** The size bound (no property key). */
        public static final int MAX_ENTRIES = 1 << 20;

        public Approx {
            if (ttl == null || ttl.isNegative() || ttl.isZero() || maxEntries <= 0) {
                throw new IllegalArgumentException("approx index TTL and size must be positive");
            }
        }
    }

    /**
     * Which workers a greedy decision ({@code kv}/{@code load} at temperature 0) scores: with pruning on,
     * the eligible workers holding any of the prompt's blocks plus the {@code leastLoaded} least-loaded
     * eligible workers that are not busy, read from the booking ledger's {@link WorkerRanking}; with it
     * off, every worker (see {@link CandidateSet} for the guarantee).
     *
     * @param enabled     prune
     * @param leastLoaded how many least-loaded workers join the holders
     */
    public record Pruning(boolean enabled, int leastLoaded) {
        /** Every worker is scored. */
        public static final Pruning OFF = new Pruning(false, 1);

        public Pruning {
            if (leastLoaded < 1) {
                throw new IllegalArgumentException("least-loaded candidates must be at least 1: " + leastLoaded);
            }
        }
    }
}
