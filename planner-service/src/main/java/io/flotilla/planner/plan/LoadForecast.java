package io.flotilla.planner.plan;

import io.flotilla.planner.core.Observation;
import io.flotilla.planner.predict.LoadPredictor;
import io.flotilla.planner.predict.PeriodDetector;
import io.flotilla.planner.predict.PredictionError;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;

/**
 * What the planner expects of the traffic: the predictors of the request rate, mean ISL, mean OSL and
 * cached fraction, their one-step errors, the period of the rate ({@link PeriodDetector}), and the recent
 * level of the rate that a new interval's count is tested against ({@link #recentLevel}). The rate
 * forecast k intervals ahead is the predictor's, raised to the seasonal forecast when a period is known:
 * max(ŷ_k, ŝ_k), so that the pool is sized ahead of a rise the period foresees and the trend cannot.
 * It also remembers how fast the rate has risen ({@link #rise}): the rise reserve's measure.
 * Not thread-safe: the planning thread alone calls it.
 */
final class LoadForecast {

    private final PlannerConfig config;
    private final LoadPredictor rate;
    private final LoadPredictor isl;
    private final LoadPredictor osl;
    private final LoadPredictor cached;
    private final PredictionError rateError;
    private final PredictionError islError;
    private final PredictionError oslError;
    private final PeriodDetector periods;
    private double[] lastForecast = {Double.NaN, Double.NaN, Double.NaN};
    private final ArrayDeque<Double> recentRates = new ArrayDeque<>();
    private double recentLevel = Double.NaN;
    private int recentCount;
    /** The rates of the last {@link #RISE_HISTORY} intervals, oldest first: what {@link #rise} measures. */
    private final ArrayDeque<Double> rates = new ArrayDeque<>();
    /**
     * Significant rises seen within the rise reserve's memory, as (when, req/s): a sliding-window maximum, so
     * each entry is larger than every later one and the first is the largest remembered.
     */
    private final ArrayDeque<Rise> rises = new ArrayDeque<>();

    /** Longest history {@link #rise} looks at: two windows of a cold start of 32 intervals. */
    static final int RISE_HISTORY = 64;

    private record Rise(Instant at, double rate) {
    }

    LoadForecast(PlannerConfig config) {
        this.config = config;
        this.rate = config.predictor().create();
        this.isl = config.predictor().create();
        this.osl = config.predictor().create();
        this.cached = config.predictor().create();
        PlannerConfig.ErrorSettings e = config.error();
        this.rateError = new PredictionError(e.window(), e.rateFloor(config.interval()));
        this.islError = new PredictionError(e.window(), 1);
        this.oslError = new PredictionError(e.window(), 1);
        PlannerConfig.Seasonality s = config.seasonality();
        int maxLag = config.intervals(s.maxPeriod());
        this.periods = s.enabled() ? new PeriodDetector(Math.min(maxLag, Math.max(2, config.intervals(s.minPeriod()))), maxLag,
                s.minCorrelation(), s.seasons(), config.interval().toMillis() / 1000.0) : null;
    }

    /** Scores the forecasts made for this interval, then feeds it to the predictors. */
    void learn(Observation o) {
        recentCount = recentRates.size();
        recentLevel = recentRates.stream().mapToDouble(Double::doubleValue).average().orElse(Double.NaN);
        if (Double.isFinite(o.requestRate())) {
            recentRates.addLast(o.requestRate());
            while (recentRates.size() > config.predictor().window()) {
                recentRates.removeFirst();
            }
        }
        if (Double.isFinite(o.requestRate())) {
            rates.addLast(o.requestRate());
            if (rates.size() > RISE_HISTORY) {
                rates.removeFirst();
            }
        }
        rateError.record(lastForecast[0], o.requestRate());
        rate.observe(o.requestRate());
        if (periods != null) {
            periods.observe(o.requestRate());
        }
        if (o.requests() > 0 && Double.isFinite(o.islMean()) && Double.isFinite(o.oslMean())) {
            islError.record(lastForecast[1], o.islMean());
            oslError.record(lastForecast[2], o.oslMean());
            isl.observe(o.islMean());
            osl.observe(o.oslMean());
            cached.observe(cachedFraction(o));
        }
    }

    /**
     * Index 0: the interval just observed; k = 1 … steps + 1: forecasts. The rate is forecast k
     * intervals ahead; the request shape (ISL, OSL, cached fraction) uses its next-interval forecast at
     * every k, so trends in rate and shape do not compound.
     */
    List<Demand> horizon(Observation o, int steps) {
        List<Demand> out = new ArrayList<>();
        out.add(new Demand(o.requestRate(), o.islMean(), o.oslMean(), cachedFraction(o)));
        Demand shape = nextShape();
        for (int k = 1; k <= steps + 1; k++) {
            out.add(new Demand(rate(k), shape.isl(), shape.osl(), shape.cachedFraction()));
        }
        Demand next = out.get(1);
        lastForecast = new double[] {next.rate(), next.isl(), next.osl()};
        return out;
    }

    /**
     * The mean request rate of the {@code predictor.window} intervals before the one just observed: the
     * level a new interval's count is tested against. NaN before the second interval.
     */
    double recentLevel() {
        return recentLevel;
    }

    /**
     * The fastest rise of the request rate within {@code span} intervals seen over the last {@code memory}
     * ({@link PlannerConfig.RiseReserve#memoryAt}), in req/s; 0 when none was significant or the memory is 0. Each interval
     * the latest rise is measured as the difference of the mean rates of the last {@code span} intervals and
     * of the {@code span} before them, less its Poisson noise: with λ₁, λ₂ those means and T = span ×
     * interval seconds,
     * <pre>
     * rise = (λ₂ − λ₁) − z·√((λ₁ + λ₂) / T)        (z: {@code scaling.window-z})
     * </pre>
     * so a ramp reads as its slope over the span, less that margin, and a flat load's noise as little (only
     * the part of the largest difference beyond z σ). {@code span} is one cold start plus an interval: the rise that can come between a planner
     * seeing it and the replica it starts being ready.
     */
    double rise(int span, Duration memory, Instant now) {
        if (memory.isZero()) {
            return 0;
        }
        int w = Math.max(1, Math.min(span, RISE_HISTORY / 2));
        if (rates.size() >= 2 * w) {
            double before = 0;
            double after = 0;
            Iterator<Double> it = rates.descendingIterator();
            for (int i = 0; i < 2 * w; i++) {
                double r = it.next();
                if (i < w) {
                    after += r;
                } else {
                    before += r;
                }
            }
            before /= w;
            after /= w;
            double seconds = w * config.interval().toMillis() / 1000.0;
            double r = after - before - config.scaling().windowZ() * Math.sqrt((before + after) / seconds);
            if (r > 0) {
                while (!rises.isEmpty() && rises.peekLast().rate() <= r) {
                    rises.removeLast();
                }
                rises.addLast(new Rise(now, r));
            }
        }
        while (!rises.isEmpty() && !rises.peekFirst().at().plus(memory).isAfter(now)) {
            rises.removeFirst();
        }
        return rises.isEmpty() ? 0 : rises.peekFirst().rate();
    }

    /** Intervals behind {@link #recentLevel}. */
    int recentCount() {
        return recentCount;
    }

    /** The request shape forecast for the next interval, at a rate of 1 request/s. */
    Demand nextShape() {
        double c = cached.predict(1);
        return new Demand(1, isl.predict(1), osl.predict(1), Double.isFinite(c) ? Math.min(0.99, c) : 0);
    }

    /** The rate forecast {@code k} intervals ahead: the predictor's, raised to the seasonal forecast. */
    double rate(int k) {
        double trend = rate.predict(k);
        double seasonal = periods == null ? Double.NaN : periods.seasonal(k);
        return Double.isFinite(seasonal) ? Math.max(finite(trend), seasonal) : trend;
    }

    /** The seasonal rate forecast {@code k} intervals ahead; NaN without a period. */
    double seasonal(int k) {
        return periods == null ? Double.NaN : periods.seasonal(k);
    }

    Optional<PeriodDetector.Period> period() {
        return periods == null ? Optional.empty() : periods.period();
    }

    /** Whether the rate predictor is past its warm-up. */
    boolean warm() {
        return rate.observations() >= config.predictor().warmup();
    }

    PredictionError rateError() {
        return rateError;
    }

    PredictionError islError() {
        return islError;
    }

    PredictionError oslError() {
        return oslError;
    }

    private static double cachedFraction(Observation o) {
        return Double.isFinite(o.cachedMean()) && o.islMean() > 0 ? o.cachedMean() / o.islMean() : 0;
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }
}
