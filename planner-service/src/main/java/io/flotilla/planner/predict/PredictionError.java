package io.flotilla.planner.predict;

import java.util.ArrayDeque;

/**
 * How wrong the one-step-ahead forecasts were recently, over the last {@code window} intervals. For a
 * forecast ŷ_t made one interval before y_t was observed, with d_t = max((|ŷ_t| + |y_t|)/2, floor):
 * <pre>
 * e_t = |ŷ_t − y_t| / d_t           sMAPE     = (1/W)·Σ e_t,  in [0, 2]
 * s_t = max(0, y_t − ŷ_t) / d_t     shortfall = (1/W)·Σ s_t,  in [0, 2]   (under-forecasts only)
 * </pre>
 * The floor keeps near-zero traffic (0 requests against a forecast of 0.01) from reading as a 200 %
 * error. sMAPE says how accurate the forecasts are; the shortfall says how far they ran below what
 * came, which is the error that can starve a pool sized from them (an over-forecast costs replicas,
 * not latency).
 */
public final class PredictionError {

    private final int window;
    private final double floor;
    private final ArrayDeque<double[]> scores = new ArrayDeque<>();
    private double errorSum;
    private double shortfallSum;

    public PredictionError(int window, double floor) {
        if (window < 1 || !(floor > 0)) {
            throw new IllegalArgumentException("window >= 1 and floor > 0 required, got " + window + ", " + floor);
        }
        this.window = window;
        this.floor = floor;
    }

    /** Scores the forecast {@code forecast} made for the value {@code actual}; NaN forecasts are skipped. */
    public void record(double forecast, double actual) {
        if (!Double.isFinite(forecast) || !Double.isFinite(actual)) {
            return;
        }
        double d = Math.max((Math.abs(forecast) + Math.abs(actual)) / 2, floor);
        double[] score = {Math.abs(forecast - actual) / d, Math.max(0, actual - forecast) / d};
        scores.addLast(score);
        errorSum += score[0];
        shortfallSum += score[1];
        if (scores.size() > window) {
            double[] old = scores.removeFirst();
            errorSum -= old[0];
            shortfallSum -= old[1];
        }
    }

    /** sMAPE over the window; 0 before anything was scored. */
    public double value() {
        return scores.isEmpty() ? 0 : Math.max(0, errorSum / scores.size());
    }

    /** Mean under-forecast over the window (the s_t above); 0 before anything was scored. */
    public double shortfall() {
        return scores.isEmpty() ? 0 : Math.max(0, shortfallSum / scores.size());
    }

    public int scored() {
        return scores.size();
    }
}
