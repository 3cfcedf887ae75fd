package io.flotilla.bench.stats;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * A sample of latencies (ms) and its percentiles.
 *
 * <p>Percentile {@code p} (0–100) of n sorted values {@code v[0..n-1]} uses linear interpolation
 * between closest ranks (NumPy's default): {@code h = (n − 1)·p/100; v[⌊h⌋] + (h − ⌊h⌋)·(v[⌊h⌋+1] − v[⌊h⌋])}.
 * An empty sample has NaN percentiles and mean (JSON {@code null}). NaN inputs are ignored.
 *
 * <p>Up to {@code capacity} values are kept exactly; beyond that the sample is a uniform reservoir of
 * {@code capacity} values (Algorithm R, seeded), while count and mean stay exact. Pooled inter-token
 * gaps of a full-size trace use this; per-request metrics never reach the default capacity.
 * Not thread-safe.
 *
 * <p>Kept hand-written rather than an HdrHistogram: the report's percentiles are meant to be
 * comparable number for number with vLLM's {@code benchmark_serving.py} and genai-perf, which take
 * {@code numpy.percentile} (linear interpolation) of the exact sample; a histogram answers with the
 * upper edge of a bucket (3 significant digits at best) and cannot interpolate between two samples.
 * The services' own latency histograms (deadlines, metrics) use HdrHistogram.
 */
public final class LatencyStats {

    public static final int DEFAULT_CAPACITY = 8_000_000;

    private final int capacity;
    private final SplittableRandom random;
    private double[] values = new double[64];
    private int size;
    private long count;
    private double sum;
    private boolean sorted = true;

    public LatencyStats(int capacity, long seed) {
        this.capacity = capacity;
        this.random = new SplittableRandom(seed);
    }

    public LatencyStats() {
        this(DEFAULT_CAPACITY, 0);
    }

    public void add(double v) {
        if (Double.isNaN(v)) {
            return;
        }
        count++;
        sum += v;
        if (size < capacity) {
            if (size == values.length) {
                values = Arrays.copyOf(values, Math.min(capacity, size * 2));
            }
            values[size++] = v;
        } else {
            long j = random.nextLong(count);
            if (j < capacity) {
                values[(int) j] = v;
            }
        }
        sorted = false;
    }

    public long count() {
        return count;
    }

    public double mean() {
        return count == 0 ? Double.NaN : sum / count;
    }

    public double percentile(double p) {
        if (size == 0) {
            return Double.NaN;
        }
        if (!sorted) {
            Arrays.sort(values, 0, size);
            sorted = true;
        }
        double h = (size - 1) * Math.min(100, Math.max(0, p)) / 100.0;
        int lo = (int) Math.floor(h);
        int hi = Math.min(size - 1, lo + 1);
        return values[lo] + (h - lo) * (values[hi] - values[lo]);
    }

    /** Sorted copy of the kept values (for CDF charts). */
    public double[] sortedValues() {
        percentile(50);
        return Arrays.copyOf(values, size);
    }

    /** {@code p50, p90, p99, mean} (and {@code count}) as a JSON-ready map; NaN becomes null. */
    public Map<String, Object> summary() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("p50", json(percentile(50)));
        m.put("p90", json(percentile(90)));
        m.put("p99", json(percentile(99)));
        m.put("mean", json(mean()));
        m.put("count", count);
        return m;
    }

    static Double json(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v * 1000.0) / 1000.0;
    }
}
