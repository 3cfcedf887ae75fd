package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.predict.PredictorSettings;

import java.time.Duration;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * Every tuning value of the planner algorithm, as the algorithm reads it. No Spring and no defaults
 * here: {@code PlannerProperties} is the one place settings and their defaults are stated, and it
 * builds this record ({@code PlannerProperties.toConfig()}); tests bind the properties they change.
 *
 * @param model          the model whose pools are planned
 * @param pools          pools sized: {AGGREGATED} or {PREFILL, DECODE}
 * @param interval       planning interval (one observation, one decision)
 * @param readyTime      how long a new replica takes to become READY (cold-start lookahead and the price of a
 *                       restart); with {@code learnReadyTime}, only until the planner has measured its own scale-ups
 * @param learnReadyTime size for, and price restarts by, the cold start measured from the planner's own scale-ups
 *                       ({@link ColdStart}) instead of {@code readyTime}
 * @param ttftTargetMs   TTFT target (SLA)
 * @param itlTargetMs    ITL target (SLA)
 * @param headroom       extra capacity on top of the predicted load (0.1 = 10 %)
 * @param limits         min, max and GPUs per replica for each pool
 * @param gpuBudget      most GPUs all sized pools may use together
 * @param predictor      predictor kind and parameters
 * @param error          prediction-error tracking and the conservative-mode threshold
 * @param correction     correction-factor bounds and smoothing
 * @param scaling        thresholds, cooldowns, the break-even rule and hold-offs
 * @param seasonality    period detection and the seasonal forecast
 */
public record PlannerConfig(String model, Set<Pool> pools, Duration interval, Duration readyTime, boolean learnReadyTime,
                            double ttftTargetMs, double itlTargetMs, double headroom, Map<Pool, Limits> limits,
                            int gpuBudget, PredictorSettings predictor, ErrorSettings error,
                            CorrectionSettings correction, Scaling scaling, Seasonality seasonality) {

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
     * @param upThreshold   scale up when the need exceeds target × this
     * @param downThreshold replica k of a pool is needed while the need exceeds (k − 1) × this: the
     *                      hysteresis band between scaling up and releasing
     * @param upCooldown    least time between a change and a scale-up
     * @param restartCost   the break-even time is this × the cold start: how many cold starts' worth of
     *                      worker time releasing a replica and starting one again costs (1: the worker-seconds
     *                      a start pays before it serves)
     * @param minHold       no replica is released sooner than this after it was last needed, whatever the
     *                      cold start (a measured start of a few seconds must not make pools flap)
     * @param trust         how far a detected period shortens the hold: λ = 1 − trust; the hold is λ·B when the
     *                      seasonal forecast has the idle spell outlast B, else B (0: ignore the forecast)
     * @param idleAfter     with no request for this long every pool goes straight to its minimum
     * @param manualHoldOff how long a hand-set replica count is kept before planning resumes from it
     * @param kvPressure    decode KV usage at or above which the decode-serving pool gets one more replica
     * @param windowZ       the interval just observed asks for more replicas than the target only when its request
     *                      count is more than this many standard deviations (Poisson) above the mean rate of the
     *                      predictor.window intervals before it (a step, not that level's noise); 0: every window
     * @param rise          the rise reserve
     */
    public record Scaling(double upThreshold, double downThreshold, Duration upCooldown, double restartCost,
                          Duration minHold, double trust, Duration idleAfter, Duration manualHoldOff, double kvPressure,
                          double windowZ, RiseReserve rise) {

        public Scaling {
            if (!(trust >= 0 && trust < 1)) {
                throw new IllegalArgumentException("scaling.trust must be in [0, 1), got " + trust);
            }
            if (!(windowZ >= 0)) {
                throw new IllegalArgumentException("scaling.window-z must not be negative, got " + windowZ);
            }
            if (!(restartCost >= 0) || minHold.isNegative() || upCooldown.isNegative()) {
                throw new IllegalArgumentException("restart cost, shortest hold and cooldown must not be negative");
            }
        }

        /** λ of the break-even rule: 1 − trust. */
        public double lambda() {
            return 1 - trust;
        }
    }

    /**
     * The rise reserve: the fastest rise the rate has shown within one cold start (plus an interval) is remembered
     * for {@link #memoryAt}, and capacity for it kept: a replica the forecasts no longer need is still needed while
     * the forecasts plus that rise need it.
     *
     * @param memory     how long a rise is remembered, fixed; null: {@code coldStarts} × the cold start
     *                   ({@code scaling.rise-memory}; 0: no reserve)
     * @param coldStarts the memory in cold starts when {@code memory} is null ({@code scaling.rise-memory-cold-starts})
     * @param replicas   at most this many replicas of a pool are kept for the reserve, above what the forecasts need
     */
    public record RiseReserve(Duration memory, double coldStarts, int replicas) {

        public RiseReserve {
            if ((memory != null && memory.isNegative()) || !(coldStarts >= 0 && Double.isFinite(coldStarts)) || replicas < 0) {
                throw new IllegalArgumentException("scaling.rise-memory, rise-memory-cold-starts and rise-replicas must not be "
                        + "negative, got " + memory + ", " + coldStarts + ", " + replicas);
            }
        }

        /** How long a rise is remembered when a cold start takes {@code coldStart}: {@code memory}, or that many cold starts. */
        public Duration memoryAt(Duration coldStart) {
            return memory != null ? memory : Duration.ofMillis(Math.round(coldStart.toMillis() * coldStarts));
        }
    }

    /**
     * @param enabled        look for a period in the request rate and forecast with it
     * @param minPeriod      shortest period looked for
     * @param maxPeriod      longest period looked for (the history kept is (seasons + 1) × this)
     * @param minCorrelation autocorrelation at the period at or above which a period counts as found
     * @param seasons        past periods averaged into the seasonal forecast
     */
    public record Seasonality(boolean enabled, Duration minPeriod, Duration maxPeriod, double minCorrelation, int seasons) {

        public Seasonality {
            if (minPeriod.compareTo(maxPeriod) > 0 || seasons < 1 || !(minCorrelation > 0 && minCorrelation <= 1)) {
                throw new IllegalArgumentException("seasonality needs min-period <= max-period, seasons >= 1 and "
                        + "0 < min-correlation <= 1");
            }
        }
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

    /** Intervals of lookahead for a cold start of {@code ready}: ⌈ready / interval⌉. */
    public int lookaheadSteps(Duration ready) {
        return (int) Math.ceil((double) ready.toMillis() / interval.toMillis());
    }

    /** Whole intervals in {@code d}, rounded to the nearest (a period or history length in planning steps). */
    public int intervals(Duration d) {
        return (int) Math.max(1, Math.round((double) d.toMillis() / interval.toMillis()));
    }
}
