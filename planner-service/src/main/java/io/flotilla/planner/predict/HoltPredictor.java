package io.flotilla.planner.predict;

/**
 * Holt's linear (double exponential) smoothing: a level and a trend, optionally damped (Gardner).
 * <pre>
 * ℓ_1 = y_1,  b_1 = 0;   ℓ_2 = y_2,  b_2 = y_2 − y_1 (first difference), then
 * ℓ_t = α·y_t + (1 − α)·(ℓ_{t−1} + φ·b_{t−1})
 * b_t = β·(ℓ_t − ℓ_{t−1}) + (1 − β)·φ·b_{t−1}
 * if ℓ_t &lt; 0:  ℓ_t = 0,  b_t = 0
 * ŷ(t+h) = max(0, ℓ_t + (φ + φ² + … + φ^h)·b_t)
 * </pre>
 * φ = 1 is classic Holt, exact on a linear series a + c·t from t = 2 on for every α, β. φ &lt; 1 makes
 * a long-horizon forecast level off instead of extrapolating noise in the trend h times. The series
 * is a rate or a length, never negative: after a sudden drop the trend's momentum would carry the
 * level below zero and hold the forecast at 0 for several intervals while it climbs back, so a level
 * that reaches zero restarts there with no trend.
 */
public final class HoltPredictor implements LoadPredictor {

    private final double alpha;
    private final double beta;
    private final double phi;
    private double level = Double.NaN;
    private double trend;
    private int n;

    public HoltPredictor(double alpha, double beta) {
        this(alpha, beta, 1);
    }

    /** @param phi trend damping in (0, 1]; 1 = undamped */
    public HoltPredictor(double alpha, double beta, double phi) {
        this.alpha = unit("alpha", alpha);
        this.beta = unit("beta", beta);
        this.phi = unit("damping", phi);
    }

    @Override
    public void observe(double y) {
        if (!Double.isFinite(y)) {
            return;
        }
        n++;
        if (n == 1) {
            level = y;
            trend = 0;
            return;
        }
        if (n == 2) {
            trend = y - level;
            level = y;
            return;
        }
        double previous = level;
        level = alpha * y + (1 - alpha) * (level + phi * trend);
        trend = beta * (level - previous) + (1 - beta) * phi * trend;
        if (level < 0) {
            level = 0;
            trend = 0;
        }
    }

    @Override
    public double predict(int steps) {
        return n == 0 ? Double.NaN : Math.max(0, level + dampedSteps(phi, steps) * trend);
    }

    /** φ + φ² + … + φ^h (= h when φ = 1). */
    static double dampedSteps(double phi, int h) {
        if (phi == 1) {
            return h;
        }
        return phi * (1 - Math.pow(phi, h)) / (1 - phi);
    }

    @Override
    public int observations() {
        return n;
    }

    @Override
    public String name() {
        return phi == 1 ? "holt" : "holt(φ=" + phi + ")";
    }

    static double unit(String name, double v) {
        if (!(v > 0 && v <= 1)) {
            throw new IllegalArgumentException(name + " must be in (0, 1], got " + v);
        }
        return v;
    }
}
