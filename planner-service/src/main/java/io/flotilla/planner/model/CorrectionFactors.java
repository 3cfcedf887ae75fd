package io.flotilla.planner.model;

import io.flotilla.planner.core.Observation;

/**
 * How far the real cluster is from the profile: observed / expected latency, smoothed and bounded.
 * <pre>
 * expected TTFT = model TTFT(isl − cached, max(1, observed prefill concurrency per replica))
 * expected ITL  = model ITL(isl + osl/2,   max(1, observed decode concurrency per replica))
 *                 on a pool that also prefills (aggregated workers): the model's ITL of a replica prefilling
 *                 its share of the prompts, (isl − cached)·rate / READY replicas tokens/s
 *                 ({@link PerformanceModel#aggregatedItlMs})
 * r = clamp(observed p90 / expected, min, max)
 * f ← clamp((1 − s)·f + s·r, min, max)         f starts at 1; updated only with ≥ minSamples measured requests
 * </pre>
 * The planner divides the latency targets by f: a cluster twice as slow as its profile (f = 2) is
 * sized as if the targets were half as long. Bounds (default [0.5, 2]) keep one bad interval or a
 * wrong profile from sizing the pools to nothing or to everything.
 *
 * <p>Why an aggregated pool's expected ITL includes its prefill: the decode-only profile does not see the
 * steps that prefill, which hold every decoding sequence for a prompt's prefill time. Measured against the
 * decode-only ITL, f_itl would be mostly that interference (1.6–1.8 on the evaluation's traces, where a
 * 2000-token prefill step takes ~190 ms and a decode step ~80 ms), and the sizing — which already charges
 * an aggregated replica's prefill as busy time it cannot decode in — would pay for it twice: the pool
 * evaluated in docs/benchmarks.md ran a fourth worker at 8 req/s where three held every request's ITL
 * under 150 ms against a 200 ms target.
 */
public final class CorrectionFactors {

    private final double min;
    private final double max;
    private final double smoothing;
    private final long minSamples;
    private double prefill = 1;
    private double decode = 1;

    public CorrectionFactors(double min, double max, double smoothing, long minSamples) {
        if (!(min > 0 && min <= 1 && max >= 1 && smoothing > 0 && smoothing <= 1)) {
            throw new IllegalArgumentException("need 0 < min <= 1 <= max and 0 < smoothing <= 1");
        }
        this.min = min;
        this.max = max;
        this.smoothing = smoothing;
        this.minSamples = minSamples;
    }

    /**
     * @param prefillingReplicas READY replicas of the decode-serving pool that also prefill (an aggregated pool
     *                           without a prefill pool); 0 when decode workers only decode
     */
    public void update(Observation o, PerformanceModel model, int prefillingReplicas) {
        if (o.latencySamples() < minSamples || !Double.isFinite(o.islMean())) {
            return;
        }
        double uncached = Math.max(1, o.islMean() - (Double.isFinite(o.cachedMean()) ? o.cachedMean() : 0));
        if (Double.isFinite(o.ttftP90Ms()) && o.ttftP90Ms() > 0) {
            double expected = model.ttftMs(uncached, Math.max(1, o.prefillConcurrency()));
            prefill = blend(prefill, o.ttftP90Ms() / expected);
        }
        if (Double.isFinite(o.itlP90Ms()) && o.itlP90Ms() > 0 && Double.isFinite(o.oslMean())) {
            double context = o.islMean() + o.oslMean() / 2;
            double concurrency = Math.max(1, o.decodeConcurrency());
            double expected = prefillingReplicas > 0
                    ? model.aggregatedItlMs(context, concurrency, uncached, uncached * o.requestRate() / prefillingReplicas)
                    : model.itlMs(context, concurrency);
            decode = blend(decode, o.itlP90Ms() / expected);
        }
    }

    private double blend(double current, double ratio) {
        return clamp((1 - smoothing) * current + smoothing * clamp(ratio));
    }

    private double clamp(double v) {
        return Math.max(min, Math.min(max, v));
    }

    /** TTFT factor (observed / expected). */
    public double prefill() {
        return prefill;
    }

    /** ITL factor (observed / expected). */
    public double decode() {
        return decode;
    }
}
