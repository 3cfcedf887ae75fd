package io.flotilla.planner.predict;

/**
 * Forecasts one non-negative series observed once per planning interval (request rate, mean ISL,
 * mean OSL). Pure: the forecast depends only on the values observed, in order. Not thread-safe.
 */
public interface LoadPredictor {

    /** Adds the value of the interval that just ended. Non-finite values are ignored. */
    void observe(double value);

    /**
     * The forecast for {@code steps} intervals after the last observed one ({@code steps >= 1}),
     * never negative; NaN before the first observation.
     */
    double predict(int steps);

    /** Values observed so far. */
    int observations();

    /** Short name for decisions and logs. */
    String name();
}
