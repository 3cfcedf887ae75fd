package io.flotilla.planner.observe;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Values of one interval for mean and percentiles. Keeps every value up to {@code capacity}, then a
 * uniform reservoir sample of that size (Vitter's algorithm R) with a fixed seed, so the same
 * input gives the same percentiles. The mean is always exact.
 */
final class SampleSet {

    private final double[] values;
    private final SplittableRandom random = new SplittableRandom(0x5EED);
    private long count;
    private double sum;

    SampleSet(int capacity) {
        values = new double[capacity];
    }

    void add(double v) {
        if (!Double.isFinite(v)) {
            return;
        }
        sum += v;
        if (count < values.length) {
            values[(int) count] = v;
        } else {
            long j = random.nextLong(count + 1);
            if (j < values.length) {
                values[(int) j] = v;
            }
        }
        count++;
    }

    long count() {
        return count;
    }

    /** Mean of every value added; NaN when none. */
    double mean() {
        return count == 0 ? Double.NaN : sum / count;
    }

    /** Nearest-rank percentile {@code q} in (0, 1] of the kept values; NaN when none. */
    double percentile(double q) {
        int n = (int) Math.min(count, values.length);
        if (n == 0) {
            return Double.NaN;
        }
        double[] sorted = Arrays.copyOf(values, n);
        Arrays.sort(sorted);
        int rank = (int) Math.ceil(q * n);
        return sorted[Math.max(0, Math.min(n - 1, rank - 1))];
    }
}
