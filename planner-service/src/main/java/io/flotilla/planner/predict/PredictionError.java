package io.flotilla.planner.predict;

import java.util.ArrayDeque;

/**
 * How wrong the one-step-ahead forecasts were recently: the mean over the last {@code window}
 * intervals of a floored symmetric absolute percentage error
 * <pre>
 * e_t = |ŷ_t − y_t| / max((|ŷ_t| + |y_t|)/2, floor)        sMAPE = (1/W)·Σ e_t,  in [0, 2]
 * </pre>
 * where ŷ_t was forecast one interval before y_t was observed. The floor keeps near-zero traffic
 * (0 requests against a forecast of 0.01) from reading as a 200 % error.
 */
public final class PredictionError {

    private final int window;
    private final double floor;
    private final ArrayDeque<Double> errors = new ArrayDeque<>();
    private double sum;

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
        double e = Math.abs(forecast - actual) / Math.max((Math.abs(forecast) + Math.abs(actual)) / 2, floor);
        errors.addLast(e);
        sum += e;
        if (errors.size() > window) {
            sum -= errors.removeFirst();
        }
    }

    /** sMAPE over the window; 0 before anything was scored. */
    public double value() {
        return errors.isEmpty() ? 0 : Math.max(0, sum / errors.size());
    }

    public int scored() {
        return errors.size();
    }
}
