package io.flotilla.router.core;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;

/**
 * Everything the pure routing core is configured with; {@code RouterProperties.routingConfig()}
 * produces it from the service's settings. {@link #defaults()} is what an empty environment binds to
 * ({@code RouterPropertiesTest} holds the two equal), for the core's own tests and benchmarks.
 *
 * @param strategy    kv | load | round-robin | random                                (kv)
 * @param weights     w_prefill, w_decode, w_queue of the cost formula                 (1, 1, 1)
 * @param temperature 0 picks the minimum cost; &gt; 0 samples softmax over normalised costs (0)
 * @param loadMerge   how load reports and bookings combine                            (DELTA)
 * @param busy        busy thresholds and retry-after hint
 * @param disagg      prefill/decode pairing
 * @param sequenceTtl bookings not touched for this long are forgotten                 (10 min)
 * @param approx      the router's own approximate prefix index
 * @param pruning     which workers a greedy decision scores (all, or holders plus the least loaded)
 * @param policies    policy sections by model ({@link PolicySpec#DEFAULT} for every model): filters and
 *                    scorer weights on top of the standard formula                     (none)
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

    public static RouterConfig defaults() {
        return new RouterConfig(Strategy.KV, Weights.DEFAULT, 0.0, LoadMerge.DELTA, Busy.DEFAULT, Disagg.DEFAULT,
                Duration.ofMinutes(10), Approx.DEFAULT, Pruning.DEFAULT);
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
        public static final Weights DEFAULT = new Weights(1, 1, 1);
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
     * @param prefillTokens    (fraction 1.0: more prompt tokens queued than the whole KV cache holds)
     * @param decodeBlocks     (fraction 0.95)
     * @param retryAfterMs     hint when no drain time can be estimated (1000)
     * @param minRetryAfterMs  lower clamp of the hint (100)
     * @param maxRetryAfterMs  upper clamp of the hint (30000)
     */
    public record Busy(Threshold prefillTokens, Threshold decodeBlocks, long retryAfterMs, long minRetryAfterMs,
                       long maxRetryAfterMs) {
        public static final Busy DEFAULT = new Busy(Threshold.fraction(1.0), Threshold.fraction(0.95), 1000, 100, 30_000);
        public static final Busy NEVER = new Busy(Threshold.DISABLED, Threshold.DISABLED, 1000, 100, 30_000);

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
     *                          on the chosen prefill worker exceeds this (1024)
     */
    public record Disagg(int minUncachedTokens) {
        public static final Disagg DEFAULT = new Disagg(1024);
    }

    /**
     * @param ttl        how long a routed prefix is assumed to stay cached on its worker (120 s)
     * @param maxEntries bound on (block, worker) entries; the least recently routed go first (1,048,576)
     */
    public record Approx(Duration ttl, int maxEntries) {
        public static final Approx DEFAULT = new Approx(Duration.ofSeconds(120), 1 << 20);

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
     * @param enabled     prune (true)
     * @param leastLoaded how many least-loaded workers join the holders (16)
     */
    public record Pruning(boolean enabled, int leastLoaded) {
        public static final Pruning DEFAULT = new Pruning(true, 16);
        public static final Pruning OFF = new Pruning(false, 16);

        public Pruning {
            if (leastLoaded < 1) {
                throw new IllegalArgumentException("least-loaded candidates must be at least 1: " + leastLoaded);
            }
        }
    }
}
