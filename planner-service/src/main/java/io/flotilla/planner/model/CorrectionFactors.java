package io.flotilla.planner.model;

import io.flotilla.planner.core.Observation;

/**
 * How far the real cluster is from the profile: observed / expected latency, smoothed and bounded.
 * <pre>
 * expected TTFT = model TTFT(isl − cached, max(1, observed prefill concurrency per replica))
 * expected ITL  = model ITL(isl + osl/2,   max(1, observed decode concurrency per replica))
 * r = clamp(observed p90 / expected, min, max)
 * f ← clamp((1 − s)·f + s·r, min, max)         f starts at 1; updated only with ≥ minSamples measured requests
 * </pre>
 * The planner divides the latency targets by f: a cluster twice as slow as its profile (f = 2) is
 * sized as if the targets were half as long. Bounds (default [0.5, 2]) keep one bad interval or a
 * wrong profile from sizing the pools to nothing or to everything.
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

    public void update(Observation o, PerformanceModel model) {
        if (o.latencySamples() < minSamples || !Double.isFinite(o.islMean())) {
            return;
        }
        double cached = Double.isFinite(o.cachedMean()) ? o.cachedMean() : 0;
        if (Double.isFinite(o.ttftP90Ms()) && o.ttftP90Ms() > 0) {
            double expected = model.ttftMs(Math.max(1, o.islMean() - cached), Math.max(1, o.prefillConcurrency()));
            prefill = blend(prefill, o.ttftP90Ms() / expected);
        }
        if (Double.isFinite(o.itlP90Ms()) && o.itlP90Ms() > 0 && Double.isFinite(o.oslMean())) {
            double expected = model.itlMs(o.islMean() + o.oslMean() / 2, Math.max(1, o.decodeConcurrency()));
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
