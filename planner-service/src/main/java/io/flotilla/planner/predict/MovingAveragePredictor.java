package io.flotilla.planner.predict;

import java.util.ArrayDeque;

/** ŷ(t+h) = (1/n)·Σ_{i=0}^{n−1} y_{t−i}: the mean of the last n values (fewer at the start), for every horizon. */
public final class MovingAveragePredictor implements LoadPredictor {

    private final int window;
    private final ArrayDeque<Double> values = new ArrayDeque<>();
    private double sum;
    private int n;

    public MovingAveragePredictor(int window) {
        if (window < 1) {
            throw new IllegalArgumentException("window must be at least 1, got " + window);
        }
        this.window = window;
    }

    @Override
    public void observe(double value) {
        if (!Double.isFinite(value)) {
            return;
        }
        values.addLast(value);
        sum += value;
        if (values.size() > window) {
            sum -= values.removeFirst();
        }
        n++;
    }

    @Override
    public double predict(int steps) {
        return values.isEmpty() ? Double.NaN : Math.max(0, sum / values.size());
    }

    @Override
    public int observations() {
        return n;
    }

    @Override
    public String name() {
        return "moving-average(" + window + ")";
    }
}
