package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.predict.PredictorSettings;

import java.time.Duration;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Every tuning value of the planner algorithm (no Spring here; {@code PlannerProperties} maps onto it).
 *
 * @param model        the model whose pools are planned
 * @param pools        pools sized: {AGGREGATED} or {PREFILL, DECODE}
 * @param interval     planning interval (one observation, one decision)
 * @param readyTime    how long a new replica takes to become READY (cold-start lookahead); with
 *                     {@code learnReadyTime}, only until the planner has measured its own scale-ups
 * @param ttftTargetMs TTFT target (SLA)
 * @param itlTargetMs  ITL target (SLA)
 * @param headroom     extra capacity on top of the predicted load (0.1 = 10 %)
 * @param limits       min, max and GPUs per replica for each pool
 * @param gpuBudget    most GPUs all sized pools may use together
 * @param predictor    predictor kind and parameters
 * @param error        prediction-error tracking and the conservative-mode threshold
 * @param correction   correction-factor bounds and smoothing
 * @param scaling      thresholds, cooldowns and hold-offs
 * @param learnReadyTime size for the cold start measured from the planner's own scale-ups ({@link ColdStart})
 *                     instead of {@code readyTime}
 */
public record PlannerConfig(String model, Set<Pool> pools, Duration interval, Duration readyTime,
                            double ttftTargetMs, double itlTargetMs, double headroom, Map<Pool, Limits> limits,
                            int gpuBudget, PredictorSettings predictor, ErrorSettings error,
                            CorrectionSettings correction, Scaling scaling, boolean learnReadyTime) {

    /** With the configured ready time held fixed (simulations, where replicas are ready at once). */
    public PlannerConfig(String model, Set<Pool> pools, Duration interval, Duration readyTime, double ttftTargetMs,
                         double itlTargetMs, double headroom, Map<Pool, Limits> limits, int gpuBudget,
                         PredictorSettings predictor, ErrorSettings error, CorrectionSettings correction, Scaling scaling) {
        this(model, pools, interval, readyTime, ttftTargetMs, itlTargetMs, headroom, limits, gpuBudget, predictor, error,
                correction, scaling, false);
    }

    /** Bounds of one pool. */
    public record Limits(int min, int max, int gpusPerReplica) {
        public Limits {
            if (min < 0 || max < min || gpusPerReplica < 0) {
                throw new IllegalArgumentException("need 0 <= min <= max and gpus >= 0, got " + min + ", " + max + ", " + gpusPerReplica);
            }
        }
    }

    /**
     * @param window         intervals the sMAPE is averaged over
     * @param rateFloor      sMAPE denominator floor for the request rate (requests/s)
     * @param conservativeAt shortfall of the request-rate forecast (mean under-forecast) above which no pool
     *                       scales down
     * @param minRequests    sMAPE denominator floor in requests per interval: the request-rate floor is at
     *                       least {@code minRequests / interval}, so the Poisson noise of a few requests per
     *                       interval does not read as a prediction error
     */
    public record ErrorSettings(int window, double rateFloor, double conservativeAt, double minRequests) {

        /** The request-rate floor for intervals of {@code interval}: max(rateFloor, minRequests / interval). */
        public double rateFloor(Duration interval) {
            return Math.max(rateFloor, minRequests * 1000.0 / interval.toMillis());
        }
    }

    /**
     * @param min        lower bound of a correction factor
     * @param max        upper bound
     * @param smoothing  weight of the newest interval's ratio
     * @param minSamples measured requests an interval needs to update the factors
     */
    public record CorrectionSettings(double min, double max, double smoothing, long minSamples) {
    }

    /**
     * @param upThreshold     scale up when the needed replicas exceed target × this
     * @param downThreshold   scale down only when the need fits in (target − 1) × this
     * @param upCooldown      least time between a change and a scale-up
     * @param downCooldown    least time between a change and a scale-down
     * @param minStable       how long the scale-down condition must hold without a break
     * @param maxDownStep     most replicas removed per decision
     * @param idleAfter       with no request for this long every pool goes straight to its minimum
     * @param manualHoldOff   how long a hand-set replica count is kept before planning resumes from it
     * @param kvPressure      decode KV usage at or above which the decode-serving pool gets one more replica
     */
    public record Scaling(double upThreshold, double downThreshold, Duration upCooldown, Duration downCooldown,
                          Duration minStable, int maxDownStep, Duration idleAfter, Duration manualHoldOff,
                          double kvPressure) {
    }

    public PlannerConfig {
        pools = Set.copyOf(pools);
        limits = Map.copyOf(limits);
        if (pools.isEmpty()) {
            throw new IllegalArgumentException("no pool to plan");
        }
        for (Pool p : pools) {
            if (!limits.containsKey(p)) {
                throw new IllegalArgumentException("no limits for pool " + p.label());
            }
        }
        if (interval.isZero() || interval.isNegative() || ttftTargetMs <= 0 || itlTargetMs <= 0 || headroom < 0) {
            throw new IllegalArgumentException("interval, latency targets must be positive and headroom non-negative");
        }
    }

    public static Set<Pool> poolsOf(boolean disaggregated) {
        return disaggregated ? EnumSet.of(Pool.PREFILL, Pool.DECODE) : EnumSet.of(Pool.AGGREGATED);
    }

    /**
     * The defaults of {@code PlannerProperties}, for tests and simulations — except that the ready time
     * is held fixed ({@code learnReadyTime} false): simulated replicas are ready at once.
     */
    public static PlannerConfig defaults(String model, boolean disaggregated) {
        Map<Pool, Limits> limits = new EnumMap<>(Pool.class);
        limits.put(Pool.PREFILL, new Limits(0, 8, 1));
        limits.put(Pool.DECODE, new Limits(1, 8, 1));
        limits.put(Pool.AGGREGATED, new Limits(1, 8, 1));
        return new PlannerConfig(model, poolsOf(disaggregated), Duration.ofSeconds(30), Duration.ofSeconds(120),
                1000, 50, 0.1, limits, 16, PredictorSettings.defaults(),
                new ErrorSettings(10, 0.1, 0.25, 10), new CorrectionSettings(0.5, 2.0, 0.3, 20),
                new Scaling(1.0, 0.8, Duration.ofSeconds(30), Duration.ofSeconds(120), Duration.ofSeconds(180), 1,
                        Duration.ofMinutes(5), Duration.ofMinutes(10), 0.95));
    }

    public PlannerConfig withReadyTime(Duration d) {
        return new PlannerConfig(model, pools, interval, d, ttftTargetMs, itlTargetMs, headroom, limits, gpuBudget,
                predictor, error, correction, scaling, learnReadyTime);
    }

    public PlannerConfig withPredictor(PredictorSettings p) {
        return new PlannerConfig(model, pools, interval, readyTime, ttftTargetMs, itlTargetMs, headroom, limits, gpuBudget,
                p, error, correction, scaling, learnReadyTime);
    }

    public PlannerConfig withGpuBudget(int budget) {
        return new PlannerConfig(model, pools, interval, readyTime, ttftTargetMs, itlTargetMs, headroom, limits, budget,
                predictor, error, correction, scaling, learnReadyTime);
    }

    public PlannerConfig withError(ErrorSettings e) {
        return new PlannerConfig(model, pools, interval, readyTime, ttftTargetMs, itlTargetMs, headroom, limits, gpuBudget,
                predictor, e, correction, scaling, learnReadyTime);
    }

    public PlannerConfig withLearnedReadyTime(boolean learn) {
        return new PlannerConfig(model, pools, interval, readyTime, ttftTargetMs, itlTargetMs, headroom, limits, gpuBudget,
                predictor, error, correction, scaling, learn);
    }

    public PlannerConfig withScaling(Scaling s) {
        return new PlannerConfig(model, pools, interval, readyTime, ttftTargetMs, itlTargetMs, headroom, limits, gpuBudget,
                predictor, error, correction, s, learnReadyTime);
    }

    /** Intervals of lookahead for a cold start of {@code ready}: ⌈ready / interval⌉. */
    public int lookaheadSteps(Duration ready) {
        return (int) Math.ceil((double) ready.toMillis() / interval.toMillis());
    }
}
