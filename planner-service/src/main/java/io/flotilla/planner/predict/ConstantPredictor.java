package io.flotilla.planner.predict;

/** ŷ(t+h) = y_t: the last value, for every horizon (the naive forecast). */
public final class ConstantPredictor implements LoadPredictor {

    private double last = Double.NaN;
    private int n;

    @Override
    public void observe(double value) {
        if (Double.isFinite(value)) {
            last = value;
            n++;
        }
    }

    @Override
    public double predict(int steps) {
        return Double.isNaN(last) ? Double.NaN : Math.max(0, last);
    }

    @Override
    public int observations() {
        return n;
    }

    @Override
    public String name() {
        return "constant";
    }
}
