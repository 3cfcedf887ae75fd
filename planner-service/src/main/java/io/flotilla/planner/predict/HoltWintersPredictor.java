package io.flotilla.planner.predict;

/**
 * Additive Holt-Winters (triple exponential smoothing) with season length m.
 * <pre>
 * first m values (initialisation): forecast = last value;
 *   then ℓ_m = mean(y_1..y_m), b_m = 0, s_i = y_i − ℓ_m (i = 1..m)
 * t &gt; m:
 *   ℓ_t = α·(y_t − s_{t−m}) + (1 − α)·(ℓ_{t−1} + φ·b_{t−1})
 *   b_t = β·(ℓ_t − ℓ_{t−1}) + (1 − β)·φ·b_{t−1}
 *   s_t = γ·(y_t − ℓ_t) + (1 − γ)·s_{t−m}
 * ŷ(t+h) = max(0, ℓ_t + (φ + … + φ^h)·b_t + s_{t−m+1+((h−1) mod m)})
 * </pre>
 * φ is the trend damping (1 = undamped). On a purely periodic series it is exact from the first full
 * season on.
 */
public final class HoltWintersPredictor implements LoadPredictor {

    private final double alpha;
    private final double beta;
    private final double gamma;
    private final double phi;
    private final int season;
    private final double[] seasonal; // s indexed by t mod m
    private double level = Double.NaN;
    private double trend;
    private double last = Double.NaN;
    private int n;

    public HoltWintersPredictor(double alpha, double beta, double gamma, int season) {
        this(alpha, beta, gamma, 1, season);
    }

    public HoltWintersPredictor(double alpha, double beta, double gamma, double phi, int season) {
        this.phi = HoltPredictor.unit("damping", phi);
        this.alpha = HoltPredictor.unit("alpha", alpha);
        this.beta = HoltPredictor.unit("beta", beta);
        this.gamma = HoltPredictor.unit("gamma", gamma);
        if (season < 2) {
            throw new IllegalArgumentException("season length must be at least 2, got " + season);
        }
        this.season = season;
        this.seasonal = new double[season];
    }

    @Override
    public void observe(double y) {
        if (!Double.isFinite(y)) {
            return;
        }
        int t = n; // 0-based index of this value
        n++;
        last = y;
        if (n < season) {
            seasonal[t % season] = y;
            return;
        }
        if (n == season) {
            seasonal[t % season] = y;
            double mean = 0;
            for (double v : seasonal) {
                mean += v;
            }
            mean /= season;
            for (int i = 0; i < season; i++) {
                seasonal[i] -= mean;
            }
            level = mean;
            trend = 0;
            return;
        }
        int slot = t % season;
        double previous = level;
        level = alpha * (y - seasonal[slot]) + (1 - alpha) * (level + phi * trend);
        trend = beta * (level - previous) + (1 - beta) * phi * trend;
        seasonal[slot] = gamma * (y - level) + (1 - gamma) * seasonal[slot];
    }

    @Override
    public double predict(int steps) {
        if (n == 0) {
            return Double.NaN;
        }
        if (n < season) {
            return Math.max(0, last);
        }
        int slot = (n - 1 + steps) % season; // index of the forecast value t+h (0-based: n−1+h)
        return Math.max(0, level + HoltPredictor.dampedSteps(phi, steps) * trend + seasonal[slot]);
    }

    @Override
    public int observations() {
        return n;
    }

    @Override
    public String name() {
        return "holt-winters(" + season + ")";
    }
}
