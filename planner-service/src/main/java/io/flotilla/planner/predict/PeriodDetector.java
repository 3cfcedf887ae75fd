package io.flotilla.planner.predict;

import java.util.Optional;

/**
 * Finds the period of a request rate observed once per interval from its autocorrelation, and
 * forecasts with it. Over the last N values x_1 … x_N (at most {@code capacity}; the stretch of zeros
 * before the first request is not history):
 * <pre>
 * r(k) = Pearson correlation of (x_1 … x_{N−k}) and (x_{1+k} … x_N)          lag k = 1 … ⌊N/2⌋
 * period P = the smallest k in [minLag, min(maxLag, ⌊N/2⌋ − 1)] with N − k ≥ 12 and
 *            r(k) ≥ minCorrelation,  r(k) ≥ r(k − 1),  r(k) ≥ r(k + 1)     (a peak of the autocorrelation)
 *            r(k) − min_{j &lt; k} r(j) ≥ 1                                  (a swing from a trough before it)
 *            var(x) ≥ 4 · mean(x) / intervalSeconds                         (more than Poisson noise)
 * seasonal forecast ŝ(t+h) = mean of x_{t+h−jP} over j = 1 … seasons with t+h−jP ≤ t, inside the history
 * </pre>
 * k ≤ N/2 means two whole periods must have been seen, and at least 12 pairs must be compared. The
 * swing keeps trends, steps and single bursts silent: a ramp, a step or one burst correlates with
 * itself at the lags where the shapes overlap, but never goes from anti-correlated to correlated,
 * while a repeating series swings through a trough between its repetitions (r(P/2) ≈ −δ/(1−δ) for
 * bursts of duty cycle δ, −1 for a sine). The noise floor keeps white noise and Poisson counts silent
 * whatever their autocorrelation estimate does: a rate of λ requests/s counted over intervals of T s
 * varies by λ/T by itself, and a variation not well above that is nothing a pool could be sized by.
 * Pure; deterministic for a series; not thread-safe.
 */
public final class PeriodDetector {

    /** Fewest pairs a lag's correlation is computed over. */
    static final int MIN_PAIRS = 12;
    /** How far the autocorrelation must rise from its trough to its peak. */
    static final double SWING = 1.0;
    /** How many times the variance of Poisson counts alone the rate must vary by. */
    static final double NOISE_MULTIPLE = 4;

    /** A period found: {@code lag} intervals, with autocorrelation {@code correlation} there. */
    public record Period(int lag, double correlation) {
    }

    private final int minLag;
    private final int maxLag;
    private final double minCorrelation;
    private final int seasons;
    private final double intervalSeconds;
    private final double[] ring;
    private int size;
    private int next;
    private Period period;

    /**
     * @param minLag         shortest period looked for, in intervals (at least 2)
     * @param maxLag         longest period looked for, in intervals
     * @param minCorrelation autocorrelation a period needs, in (0, 1]
     * @param seasons        past periods averaged by {@link #seasonal}; the history holds (seasons + 1) × maxLag values
     * @param intervalSeconds the length of the intervals the rates were counted over (the Poisson noise floor)
     */
    public PeriodDetector(int minLag, int maxLag, double minCorrelation, int seasons, double intervalSeconds) {
        if (minLag < 2 || maxLag < minLag || !(minCorrelation > 0 && minCorrelation <= 1) || seasons < 1 || !(intervalSeconds > 0)) {
            throw new IllegalArgumentException("need 2 <= minLag <= maxLag, 0 < minCorrelation <= 1, seasons >= 1 and an "
                    + "interval > 0, got " + minLag + ", " + maxLag + ", " + minCorrelation + ", " + seasons + ", " + intervalSeconds);
        }
        this.intervalSeconds = intervalSeconds;
        this.minLag = minLag;
        this.maxLag = maxLag;
        this.minCorrelation = minCorrelation;
        this.seasons = seasons;
        this.ring = new double[Math.max(2 * maxLag + 2, (seasons + 1) * maxLag)];
    }

    /** Adds the value of the interval that just ended and looks for the period again. Non-finite values count as 0. */
    public void observe(double value) {
        double v = Double.isFinite(value) ? Math.max(0, value) : 0;
        if (size == 0 && v == 0) {
            return; // no traffic yet: nothing about its period
        }
        ring[next] = v;
        next = (next + 1) % ring.length;
        size = Math.min(size + 1, ring.length);
        period = detect();
    }

    /** The period of the values seen, if there is one. */
    public Optional<Period> period() {
        return Optional.ofNullable(period);
    }

    /**
     * The seasonal forecast {@code steps} intervals after the last value (steps ≥ 1): the mean of the
     * values one, two, … {@code seasons} periods before that time; NaN without a period.
     */
    public double seasonal(int steps) {
        if (period == null || steps < 1) {
            return Double.NaN;
        }
        double sum = 0;
        int n = 0;
        for (int j = 1; j <= seasons; j++) {
            int back = j * period.lag() - steps; // 0 = the last value
            if (back < 0) {
                continue;
            }
            if (back >= size) {
                break;
            }
            sum += at(back);
            n++;
        }
        return n == 0 ? Double.NaN : sum / n;
    }

    public int observations() {
        return size;
    }

    /** The value {@code back} intervals before the last one (0 = the last). */
    private double at(int back) {
        return ring[Math.floorMod(next - 1 - back, ring.length)];
    }

    private Period detect() {
        int n = size;
        int top = Math.min(maxLag, Math.min(n / 2 - 1, n - MIN_PAIRS));
        if (top < minLag) {
            return null;
        }
        double[] x = new double[n];
        double mean = 0;
        for (int i = 0; i < n; i++) {
            x[i] = at(n - 1 - i); // oldest first
            mean += x[i];
        }
        mean /= n;
        double variance = 0;
        for (double v : x) {
            variance += (v - mean) * (v - mean);
        }
        if (variance / n < NOISE_MULTIPLE * mean / intervalSeconds) {
            return null;
        }
        double[] r = new double[top + 2];
        for (int k = 1; k <= top + 1; k++) {
            r[k] = correlation(x, k);
        }
        double trough = 1;
        for (int k = 1; k <= top; k++) {
            if (k >= minLag && r[k] >= minCorrelation && r[k] >= r[k - 1] && r[k] >= r[k + 1] && r[k] - trough >= SWING) {
                return new Period(k, r[k]);
            }
            trough = Math.min(trough, r[k]);
        }
        return null;
    }

    /** Pearson correlation of x[0 … n−k) and x[k … n); 0 when either part is constant. */
    static double correlation(double[] x, int k) {
        int m = x.length - k;
        if (m < 2) {
            return 0;
        }
        double ma = 0;
        double mb = 0;
        for (int i = 0; i < m; i++) {
            ma += x[i];
            mb += x[i + k];
        }
        ma /= m;
        mb /= m;
        double sab = 0;
        double saa = 0;
        double sbb = 0;
        for (int i = 0; i < m; i++) {
            double a = x[i] - ma;
            double b = x[i + k] - mb;
            sab += a * b;
            saa += a * a;
            sbb += b * b;
        }
        return saa <= 1e-12 || sbb <= 1e-12 ? 0 : sab / Math.sqrt(saa * sbb);
    }
}
