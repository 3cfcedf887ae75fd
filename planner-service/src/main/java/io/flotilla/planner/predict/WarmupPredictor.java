package io.flotilla.planner.predict;

/**
 * Forecasts the last value (constant) until {@code warmup} values were observed, then delegates:
 * a trend or a season fitted on two points is noise.
 */
public final class WarmupPredictor implements LoadPredictor {

    private final LoadPredictor model;
    private final ConstantPredictor constant = new ConstantPredictor();
    private final int warmup;

    public WarmupPredictor(LoadPredictor model, int warmup) {
        this.model = model;
        this.warmup = Math.max(0, warmup);
    }

    @Override
    public void observe(double value) {
        model.observe(value);
        constant.observe(value);
    }

    @Override
    public double predict(int steps) {
        return warmingUp() ? constant.predict(steps) : model.predict(steps);
    }

    public boolean warmingUp() {
        return model.observations() < warmup;
    }

    @Override
    public int observations() {
        return model.observations();
    }

    @Override
    public String name() {
        return warmingUp() ? "constant (warm-up of " + model.name() + ")" : model.name();
    }
}
