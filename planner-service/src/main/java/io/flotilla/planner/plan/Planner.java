package io.flotilla.planner.plan;

import io.flotilla.planner.core.ClusterView;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.model.CorrectionFactors;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.predict.LoadPredictor;
import io.flotilla.planner.predict.PredictionError;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.PoolObservation;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The SLA planner: {@link #plan} takes the interval that just ended and returns the decision
 * (observed, predicted, targets, reason). It never applies anything: a connector does, afterwards.
 * No I/O and no clock; its state (predictor history, correction factors, per-pool stabiliser memory)
 * changes only in {@code plan}, so a sequence of views and instants always gives the same decisions.
 * Not thread-safe: one planning thread calls it.
 *
 * <p>Per call: score last interval's forecasts (sMAPE), feed the predictors and correction factors,
 * complete the scale-ups whose replicas are READY ({@link ColdStart}), forecast the horizon (lookahead:
 * the measured cold start, or the configured ready time), size every pool ({@link ReplicaPlanner}), add one replica to a pool
 * under pressure (decode KV usage ≥ kvPressure; prefill backlog per replica longer than the TTFT target
 * to clear), clamp to [min, max], fit the GPU budget ({@link GpuBudget}), stabilise ({@link ScaleStabilizer}),
 * then trim scale-ups that no longer fit the budget because a scale-down is still held.
 */
public final class Planner {

    /** What the last plan saw and decided, for metrics. */
    public record Status(double predictedRate, double rateError, double rateShortfall, double islError, double oslError,
                         boolean conservative, double ttftCorrection, double itlCorrection, PoolCounts targets,
                         Duration readyTime) {
    }

    private final PlannerConfig config;
    private final PerformanceModel model;
    private final ReplicaPlanner sizer;
    private final ScaleStabilizer stabilizer;
    private final LoadPredictor rate;
    private final LoadPredictor isl;
    private final LoadPredictor osl;
    private final LoadPredictor cached;
    private final PredictionError rateError;
    private final PredictionError islError;
    private final PredictionError oslError;
    private final CorrectionFactors corrections;
    private final Map<Pool, ScaleStabilizer.State> states = new EnumMap<>(Pool.class);
    private double[] lastForecast = {Double.NaN, Double.NaN, Double.NaN};
    private Instant started;
    private Instant lastTraffic;
    private final ColdStart coldStart;
    private Status status;

    public Planner(PlannerConfig config, PerformanceModel model) {
        this.config = config;
        this.model = model;
        this.sizer = new ReplicaPlanner(model, config.ttftTargetMs(), config.itlTargetMs(), config.headroom());
        this.stabilizer = new ScaleStabilizer(config.scaling(), config.interval());
        this.coldStart = new ColdStart(config.readyTime(), 5);
        this.status = new Status(Double.NaN, 0, 0, 0, 0, false, 1, 1, PoolCounts.NONE, config.readyTime());
        this.rate = config.predictor().create();
        this.isl = config.predictor().create();
        this.osl = config.predictor().create();
        this.cached = config.predictor().create();
        PlannerConfig.ErrorSettings e = config.error();
        this.rateError = new PredictionError(e.window(), e.rateFloor(config.interval()));
        this.islError = new PredictionError(e.window(), 1);
        this.oslError = new PredictionError(e.window(), 1);
        PlannerConfig.CorrectionSettings c = config.correction();
        this.corrections = new CorrectionFactors(c.min(), c.max(), c.smoothing(), c.minSamples());
        for (Pool p : config.pools()) {
            states.put(p, new ScaleStabilizer.State());
        }
    }

    public PlannerConfig config() {
        return config;
    }

    public Status status() {
        return status;
    }

    public PlannerDecision plan(ClusterView view, Instant now) {
        Observation o = view.observed();
        if (started == null) {
            started = now;
        }
        learn(o, now);
        for (Pool p : config.pools()) {
            coldStart.ready(p, o.ready().get(p), now);
        }
        Duration readyTime = config.learnReadyTime() ? coldStart.estimate(config.pools()) : config.readyTime();
        List<Demand> horizon = forecast(o, config.lookaheadSteps(readyTime));
        boolean conservative = rate.observations() >= config.predictor().warmup()
                && rateError.shortfall() > config.error().conservativeAt();
        boolean idle = Duration.between(lastTraffic != null ? lastTraffic : started, now)
                .compareTo(config.scaling().idleAfter()) >= 0;
        ReplicaPlanner.Sizing sizing = sizer.size(horizon, corrections.prefill(), corrections.decode());

        adoptBaselines(view, o, now);
        Map<Pool, Double> need = new EnumMap<>(Pool.class);
        PoolCounts wanted = PoolCounts.NONE;
        List<String> notes = new ArrayList<>();
        for (Pool p : config.pools()) {
            double n = pressure(p, sizing.need(p), o, horizon.get(1), notes);
            need.put(p, n);
            PlannerConfig.Limits lim = config.limits().get(p);
            wanted = wanted.with(p, Math.max(lim.min(), Math.min(lim.max(), (int) Math.ceil(n - 1e-9))));
        }
        wanted = GpuBudget.fit(wanted, config.limits(), config.gpuBudget());

        PoolCounts before = PoolCounts.NONE;
        PoolCounts targets = PoolCounts.NONE;
        List<String> steps = new ArrayList<>();
        for (Pool p : config.pools()) {
            ScaleStabilizer.State st = states.get(p);
            before = before.with(p, st.target);
            ScaleStabilizer.Step step = stabilizer.step(st, config.limits().get(p), need.get(p), wanted.get(p), now,
                    conservative, idle);
            targets = targets.with(p, step.target());
            steps.add(p.label() + " " + step.why() + String.format(Locale.ROOT, " need %.2f", need.get(p)));
        }
        targets = trimToBudget(before, targets, steps);
        for (Pool p : config.pools()) {
            coldStart.target(p, before.get(p), targets.get(p), o.ready().get(p), now);
        }

        Demand next = horizon.get(1);
        status = new Status(next.rate(), rateError.value(), rateError.shortfall(), islError.value(), oslError.value(), conservative,
                corrections.prefill(), corrections.decode(), targets, readyTime);
        return PlannerDecision.newBuilder()
                .setTs(now.toEpochMilli())
                .setModel(config.model())
                .setObserved(o.toProto())
                .setPredicted(PoolObservation.newBuilder().setRequestRate(next.rate()).setMeanIsl(finite(next.isl()))
                        .setMeanOsl(finite(next.osl())).build())
                .setTargets(targets.toProto())
                .setReason(reason(horizon, readyTime, sizing, conservative, idle, steps, notes))
                .build();
    }

    /** Scores the forecasts made for this interval, then feeds it to the predictors and correction factors. */
    private void learn(Observation o, Instant now) {
        rateError.record(lastForecast[0], o.requestRate());
        rate.observe(o.requestRate());
        if (o.requests() > 0 && Double.isFinite(o.islMean()) && Double.isFinite(o.oslMean())) {
            islError.record(lastForecast[1], o.islMean());
            oslError.record(lastForecast[2], o.oslMean());
            isl.observe(o.islMean());
            osl.observe(o.oslMean());
            cached.observe(Double.isFinite(o.cachedMean()) && o.islMean() > 0 ? o.cachedMean() / o.islMean() : 0);
        }
        corrections.update(o, model);
        if (o.requests() > 0 || o.requestRate() > 0) {
            lastTraffic = now;
        }
    }

    /**
     * Index 0: the interval just observed; k = 1 … h+1: forecasts, h = {@code lookaheadSteps}. The
     * request rate is forecast k intervals ahead; the request shape (ISL, OSL, cached fraction) uses its
     * next-interval forecast at every k, so trends in rate and shape do not compound.
     */
    private List<Demand> forecast(Observation o, int lookaheadSteps) {
        List<Demand> horizon = new ArrayList<>();
        double cachedNow = Double.isFinite(o.cachedMean()) && o.islMean() > 0 ? o.cachedMean() / o.islMean() : 0;
        horizon.add(new Demand(o.requestRate(), o.islMean(), o.oslMean(), cachedNow));
        double c = cached.predict(1);
        double cachedNext = Double.isFinite(c) ? Math.min(0.99, c) : 0;
        for (int k = 1; k <= lookaheadSteps + 1; k++) {
            horizon.add(new Demand(rate.predict(k), isl.predict(1), osl.predict(1), cachedNext));
        }
        Demand next = horizon.get(1);
        lastForecast = new double[] {next.rate(), next.isl(), next.osl()};
        return horizon;
    }

    private void adoptBaselines(ClusterView view, Observation o, Instant now) {
        for (Pool p : config.pools()) {
            ScaleStabilizer.State st = states.get(p);
            if (view.current().has(p)) {
                if (view.changedByHand().contains(p)) {
                    ScaleStabilizer.adopt(st, view.current().get(p), now, config.scaling().manualHoldOff());
                    coldStart.target(p, st.target, st.target, o.ready().get(p), now); // not our start: not measured
                } else if (st.target < 0) {
                    st.target = view.current().get(p);
                }
            } else if (st.target < 0) {
                PlannerConfig.Limits lim = config.limits().get(p);
                st.target = Math.max(lim.min(), Math.min(lim.max(), o.ready().get(p)));
            }
        }
    }

    /** Reactive floor: one replica more than the target when the serving pool is under pressure now. */
    private double pressure(Pool p, double need, Observation o, Demand next, List<String> notes) {
        int target = states.get(p).target;
        boolean servesDecode = p == Pool.DECODE || (p == Pool.AGGREGATED && !config.pools().contains(Pool.DECODE));
        boolean servesPrefill = p == Pool.PREFILL || (p == Pool.AGGREGATED && !config.pools().contains(Pool.PREFILL));
        if (servesDecode && o.decodeKvUsage() >= config.scaling().kvPressure() && need < target + 1) {
            notes.add(String.format(Locale.ROOT, "%s KV usage %.2f ≥ %.2f", p.label(), o.decodeKvUsage(),
                    config.scaling().kvPressure()));
            need = target + 1;
        }
        double islNow = Double.isFinite(o.islMean()) ? o.islMean() : next.isl();
        if (servesPrefill && o.prefillQueueTokens() > 0 && Double.isFinite(islNow)) {
            double perReplica = model.prefillCapacity(islNow, config.ttftTargetMs() / corrections.prefill()).tokensPerSecond();
            double backlogSeconds = o.prefillQueueTokens() / Math.max(1, o.ready().get(p)) / perReplica;
            if (backlogSeconds * 1000 > config.ttftTargetMs() && need < target + 1) {
                notes.add(String.format(Locale.ROOT, "%s prefill backlog %.0f ms > TTFT target", p.label(), backlogSeconds * 1000));
                need = target + 1;
            }
        }
        return need;
    }

    /** Undoes this round's scale-ups, one replica at a time in pool order, until the budget holds. */
    private PoolCounts trimToBudget(PoolCounts before, PoolCounts targets, List<String> steps) {
        PoolCounts t = targets;
        boolean trimmed = true;
        while (GpuBudget.gpus(t, config.limits()) > config.gpuBudget() && trimmed) {
            trimmed = false;
            for (Pool p : t.pools()) {
                if (t.get(p) > before.get(p)) {
                    t = t.with(p, t.get(p) - 1);
                    states.get(p).target = t.get(p);
                    trimmed = true;
                    break;
                }
            }
        }
        if (!t.equals(targets)) {
            steps.add("scale-up trimmed to " + t + " by the GPU budget of " + config.gpuBudget());
        }
        return t;
    }

    private String reason(List<Demand> horizon, Duration readyTime, ReplicaPlanner.Sizing sizing, boolean conservative, boolean idle,
                          List<String> steps, List<String> notes) {
        StringBuilder b = new StringBuilder();
        Demand next = horizon.get(1);
        double peak = horizon.stream().mapToDouble(Demand::rate).filter(Double::isFinite).max().orElse(0);
        b.append(String.format(Locale.ROOT, "next %.2f req/s ISL %.0f OSL %.0f (peak %.2f req/s within +%d s; ready time %d s, %s); ",
                next.rate(), finite(next.isl()), finite(next.osl()), peak,
                (horizon.size() - 1) * config.interval().toSeconds(), Math.round(readyTime.toMillis() / 1000.0),
                config.learnReadyTime() && config.pools().stream().allMatch(coldStart::measured) ? "measured" : "configured"));
        sizing.tokensPerReplica().forEach((p, tps) -> b.append(String.format(Locale.ROOT, "%s %.0f tok/s per replica; ",
                p.label(), tps)));
        b.append(String.format(Locale.ROOT, "f_ttft %.2f f_itl %.2f; ", corrections.prefill(), corrections.decode()));
        if (!sizing.targetsReachable()) {
            b.append("a latency target is out of reach for one request; ");
        }
        if (conservative) {
            b.append(String.format(Locale.ROOT, "conservative: forecasts ran short by %.2f > %.2f; ", rateError.shortfall(),
                    config.error().conservativeAt()));
        }
        if (idle) {
            b.append("idle; ");
        }
        notes.forEach(n -> b.append(n).append("; "));
        b.append(String.join("; ", steps));
        return b.toString();
    }

    private static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }
}
