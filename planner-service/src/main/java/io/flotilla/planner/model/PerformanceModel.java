package io.flotilla.planner.model;

/**
 * What one replica sustains under a latency target, read off a {@link PerformanceProfile}.
 * <pre>
 * prefill (requests arrive at random, so they queue):
 *   μ(isl)  = max over the profile's concurrencies c of c·isl·1000 / TTFT(isl, c)   peak prompt tokens/s
 *   S(isl)  = TTFT(isl, 1)                                                          unloaded TTFT, ms
 *   s(isl)  = 1000·isl / μ                                                          replica time per request, ms
 *   W(ρ)    = ρ·s / (2·(1 − ρ))                                                     mean M/D/1 wait at utilisation ρ
 *   ρ*      = k / (1 + k),  k = 2·(target − S) / s       the utilisation with S + W(ρ*) = target,
 *             never below {@value #MIN_UTILISATION} (and {@value #MIN_UTILISATION} when S ≥ target)
 *   tokens/s = ρ*·μ
 * decode (a step serves every running sequence, so there is no queue while KV lasts):
 *   c_max = min(max_concurrency, kv_tokens / ctx, last grid column)
 *   c*    = the largest c in [1, c_max] with ITL(ctx, c) ≤ target (bisection; 1 when none)
 *   tokens/s = c*·1000 / ITL(ctx, c*)
 * </pre>
 * Latencies are interpolated bilinearly; profiles are monotone in concurrency (a measured one is made so
 * by {@code ProfileSweep}). {@code targetMet = false} flags a target one request alone cannot meet:
 * more replicas add throughput, not speed.
 */
public final class PerformanceModel {

    /** Lowest prefill utilisation sized for: below it extra replicas barely shorten the TTFT. */
    public static final double MIN_UTILISATION = 0.25;

    /**
     * Throughput of one replica at a target.
     *
     * @param tokensPerSecond sustainable tokens/s (prompt tokens for prefill, generated tokens for decode)
     * @param operatingPoint  utilisation ρ* (prefill) or concurrency c* (decode) at which it is reached
     * @param latencyMs       expected latency there (S + W(ρ*) for prefill, ITL for decode)
     * @param targetMet       false when even an unloaded replica misses the target
     */
    public record Capacity(double tokensPerSecond, double operatingPoint, double latencyMs, boolean targetMet) {
    }

    private final PerformanceProfile profile;

    public PerformanceModel(PerformanceProfile profile) {
        this.profile = profile;
    }

    public PerformanceProfile profile() {
        return profile;
    }

    public double ttftMs(double isl, double concurrency) {
        return profile.prefillTtftMs().value(Math.max(1, isl), Math.max(1, concurrency));
    }

    public double itlMs(double context, double concurrency) {
        return profile.decodeItlMs().value(Math.max(1, context), Math.max(1, concurrency));
    }

    /** μ(isl): the most prompt tokens/s one replica prefills, over the profile's concurrencies. */
    public double prefillPeakTokensPerSecond(double isl) {
        double tokens = Math.max(1, isl);
        double peak = 0;
        for (double c : profile.prefillTtftMs().ys()) {
            peak = Math.max(peak, c * tokens * 1000 / ttftMs(tokens, c));
        }
        return peak;
    }

    /**
     * ITL of {@code concurrency} sequences of {@code context} tokens on a replica that also prefills prompts
     * of {@code isl} uncached tokens at {@code promptTokensPerSecond} (an aggregated worker). A step that
     * prefills holds every decoding sequence for the prompt's prefill, s = TTFT(isl, 1), and gives each one
     * token; the replica spends ρ = min(0.95, promptTokensPerSecond / μ(isl)) of its time in such steps. A
     * sequence's token rate is then (1 − ρ) / ITL(context, c) + ρ / max(ITL(context, c), s), and the ITL its
     * inverse. With no prefill it is ITL(context, c).
     */
    public double aggregatedItlMs(double context, double concurrency, double isl, double promptTokensPerSecond) {
        double decode = itlMs(context, concurrency);
        if (!(promptTokensPerSecond > 0) || !(isl > 0)) {
            return decode;
        }
        double rho = Math.min(0.95, promptTokensPerSecond / prefillPeakTokensPerSecond(isl));
        double mixed = Math.max(decode, ttftMs(isl, 1));
        return 1 / ((1 - rho) / decode + rho / mixed);
    }

    public Capacity prefillCapacity(double isl, double ttftTargetMs) {
        double tokens = Math.max(1, isl);
        double peak = prefillPeakTokensPerSecond(tokens);
        double unloaded = ttftMs(tokens, 1);
        double service = 1000 * tokens / peak;
        double rho = MIN_UTILISATION;
        if (unloaded < ttftTargetMs) {
            double k = 2 * (ttftTargetMs - unloaded) / service;
            rho = Math.max(MIN_UTILISATION, k / (1 + k));
        }
        double latency = unloaded + rho * service / (2 * (1 - rho));
        return new Capacity(rho * peak, rho, latency, unloaded < ttftTargetMs);
    }

    public Capacity decodeCapacity(double context, double itlTargetMs) {
        double ctx = Math.max(1, context);
        double cMax = Math.max(1, Math.min(Math.min(profile.maxConcurrency(), profile.kvTokens() / ctx),
                profile.decodeItlMs().maxY()));
        double c = largestMeeting(itlTargetMs, cMax, x -> itlMs(ctx, x));
        double latency = itlMs(ctx, c);
        return new Capacity(c * 1000 / latency, c, latency, itlMs(ctx, 1) <= itlTargetMs);
    }

    /**
     * Decode throughput of one replica that spends {@code prefillShare} (ρ) of its time in steps prefilling
     * prompts of {@code isl} uncached tokens, at an ITL target for what its sequences see
     * ({@link #aggregatedItlMs}): the decode-only target x with (1 − ρ)/x + ρ/max(x, s) = 1/target, s =
     * TTFT(isl, 1). When a prompt's prefill step is no longer than the target, x = target (a step that
     * prefills is no slower than the target allows); otherwise x = (1 − ρ) / (1/target − ρ/s) &lt; target.
     */
    public Capacity decodeCapacityBesidePrefill(double context, double itlTargetMs, double isl, double prefillShare) {
        double step = ttftMs(Math.max(1, isl), 1);
        double rho = Math.max(0, Math.min(0.95, prefillShare));
        double target = itlTargetMs;
        if (step > itlTargetMs && rho > 0) {
            target = (1 - rho) / (1 / itlTargetMs - rho / step);
        }
        return decodeCapacity(context, target);
    }

    private static double largestMeeting(double target, double cMax, java.util.function.DoubleUnaryOperator latency) {
        if (latency.applyAsDouble(1) > target) {
            return 1;
        }
        if (latency.applyAsDouble(cMax) <= target) {
            return cMax;
        }
        double lo = 1;
        double hi = cMax;
        for (int i = 0; i < 60 && hi - lo > 1e-6; i++) {
            double mid = (lo + hi) / 2;
            if (latency.applyAsDouble(mid) <= target) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
