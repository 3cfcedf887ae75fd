package io.flotilla.planner.plan;

import io.flotilla.planner.core.ClusterView;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.model.CorrectionFactors;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.predict.PeriodDetector;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The SLA planner: {@link #plan} takes the interval that just ended and returns the decision
 * ({@link ScalingDecision}: observed, predicted, targets, reason). It never applies anything: the loop
 * hands the targets to a connector afterwards. No I/O and no clock; its state (forecasts, correction
 * factors, cold starts, per-pool stabiliser memory) changes only in {@code plan}, so a sequence of views
 * and instants always gives the same decisions. Not thread-safe: one planning thread calls it.
 *
 * <p>Per call: score last interval's forecasts, feed the predictors, the period detector and the
 * correction factors ({@link LoadForecast}), complete the scale-ups whose replicas are READY
 * ({@link ColdStart}), forecast the horizon (lookahead: the cold start), size every pool
 * ({@link ReplicaPlanner}), add one replica to a pool under pressure (decode KV usage ≥ kvPressure;
 * prefill backlog per replica longer than the TTFT target to clear), clamp to [min, max], fit the GPU
 * budget ({@link GpuBudget}), stabilise with the break-even rule priced by the cold start
 * ({@link ScaleStabilizer}), then trim scale-ups that no longer fit the budget because a scale-down is
 * still held.
 */
public final class Planner {

    private final PlannerConfig config;
    private final PerformanceModel model;
    private final ReplicaPlanner sizer;
    private final ScaleStabilizer stabilizer;
    private final LoadForecast forecast;
    private final CorrectionFactors corrections;
    private final ColdStart coldStart;
    private final Map<Pool, ScaleStabilizer.State> states = new EnumMap<>(Pool.class);
    private Instant started;
    private Instant lastTraffic;
    private PoolCounts lastReady;
    private Instant readyChanged;

    public Planner(PlannerConfig config, PerformanceModel model) {
        this.config = config;
        this.model = model;
        this.sizer = new ReplicaPlanner(model, config.ttftTargetMs(), config.itlTargetMs(), config.headroom());
        this.stabilizer = new ScaleStabilizer(config.scaling(), config.interval());
        this.coldStart = new ColdStart(config.readyTime(), 5);
        this.forecast = new LoadForecast(config);
        PlannerConfig.CorrectionSettings c = config.correction();
        this.corrections = new CorrectionFactors(c.min(), c.max(), c.smoothing(), c.minSamples());
        for (Pool p : config.pools()) {
            states.put(p, new ScaleStabilizer.State());
        }
    }

    public PlannerConfig config() {
        return config;
    }

    public ScalingDecision plan(ClusterView view, Instant now) {
        Observation o = view.observed();
        if (started == null) {
            started = now;
        }
        forecast.learn(o);
        if (!o.ready().equals(lastReady)) {
            readyChanged = lastReady == null ? null : now;
            lastReady = o.ready();
        }
        Optional<Duration> servedBefore = servedByAnotherPool(o, now);
        if (servedBefore.isEmpty()) {
            corrections.update(o, model, prefillsOnDecode() ? o.ready().get(Pool.AGGREGATED) : 0);
        }
        if (o.requests() > 0 || o.requestRate() > 0) {
            lastTraffic = now;
        }
        for (Pool p : config.pools()) {
            coldStart.ready(p, o.ready().get(p), now);
        }
        Duration readyTime = config.learnReadyTime() ? coldStart.estimate(config.pools()) : config.readyTime();
        List<Demand> horizon = forecast.horizon(o, config.lookaheadSteps(readyTime));
        double rise = forecast.rise(config.lookaheadSteps(readyTime) + 1, config.scaling().rise().memoryAt(readyTime), now);
        boolean conservative = forecast.warm() && forecast.rateError().shortfall() > config.error().conservativeAt();
        boolean idle = Duration.between(lastTraffic != null ? lastTraffic : started, now)
                .compareTo(config.scaling().idleAfter()) >= 0;
        ReplicaPlanner.Sizing sizing = sizer.size(horizon, corrections.prefill(), corrections.decode());
        ReplicaPlanner.Sizing forecastSizing = sizer.size(horizon.subList(1, horizon.size()), corrections.prefill(), corrections.decode());
        ReplicaPlanner.Sizing perRate = sizer.size(List.of(forecast.nextShape()), corrections.prefill(), corrections.decode());
        Optional<PeriodDetector.Period> period = forecast.period();

        adoptBaselines(view, o, now);
        Map<Pool, Double> need = new EnumMap<>(Pool.class);
        Map<Pool, Double> keepNeed = new EnumMap<>(Pool.class);
        PoolCounts wanted = PoolCounts.NONE;
        List<String> notes = new ArrayList<>();
        servedBefore.ifPresent(d -> notes.add(String.format(Locale.ROOT,
                "corrections kept: READY changed %d s ago, within the measured requests' span", d.toSeconds())));
        ReplicaPlanner.Sizing windowSizing = sizer.size(horizon.subList(0, 1), corrections.prefill(), corrections.decode());
        for (Pool p : config.pools()) {
            double raw = Math.max(windowNeed(p, windowSizing.need(p), forecastSizing.need(p), o, notes), forecastSizing.need(p));
            Optional<String> pressed = pressure(p, o, horizon.get(1));
            double floor = pressed.isPresent() ? states.get(p).target + 1 : 0;
            if (raw < floor) {
                notes.add(pressed.get());
            }
            double n = Math.max(raw, floor);
            need.put(p, n);
            keepNeed.put(p, Math.max(forecastSizing.need(p) + riseReserve(perRate.need(p), rise), floor));
            PlannerConfig.Limits lim = config.limits().get(p);
            wanted = wanted.with(p, Math.max(lim.min(), Math.min(lim.max(), (int) Math.ceil(n - 1e-9))));
        }
        wanted = GpuBudget.fit(wanted, config.limits(), config.gpuBudget());

        PoolCounts before = PoolCounts.NONE;
        PoolCounts targets = PoolCounts.NONE;
        Map<Pool, Duration> breakEven = new EnumMap<>(Pool.class);
        List<String> steps = new ArrayList<>();
        for (Pool p : config.pools()) {
            ScaleStabilizer.State st = states.get(p);
            before = before.with(p, st.target);
            Duration b = stabilizer.breakEven(config.learnReadyTime() ? coldStart.estimate(p) : config.readyTime());
            breakEven.put(p, b);
            ScaleStabilizer.Outlook outlook = period.isEmpty() ? ScaleStabilizer.Outlook.NONE
                    : replica -> untilNeeded(perRate.need(p), replica, period.get().lag(), horizon.size() - 1);
            ScaleStabilizer.Step step = stabilizer.step(st, config.limits().get(p), need.get(p), keepNeed.get(p), wanted.get(p), now,
                    conservative, idle, b, outlook);
            targets = targets.with(p, step.target());
            steps.add(p.label() + " " + step.why() + String.format(Locale.ROOT, " need %.2f (forecasts %.2f%s)", need.get(p),
                    keepNeed.get(p), rise > 0 ? String.format(Locale.ROOT, " with the rise reserve of %.2f req/s", rise) : ""));
        }
        targets = trimToBudget(before, targets, steps);
        for (Pool p : config.pools()) {
            coldStart.target(p, before.get(p), targets.get(p), o.ready().get(p), now);
        }

        boolean measured = config.learnReadyTime() && config.pools().stream().allMatch(coldStart::measured);
        return new ScalingDecision(now, config.model(), o, horizon.get(1), targets, readyTime, measured, breakEven,
                ScalingDecision.period(period, config.interval()), period.map(PeriodDetector.Period::correlation).orElse(Double.NaN),
                forecast.rateError().value(), forecast.rateError().shortfall(), rise, forecast.islError().value(),
                forecast.oslError().value(), conservative, corrections.prefill(), corrections.decode(),
                reason(horizon, readyTime, measured, period, breakEven, sizing, conservative, idle, steps, notes));
    }

    /**
     * The need the interval just observed makes a case for. Its count is a sample — n requests in s seconds,
     * Poisson — and it asks for more replicas than the pool's target T (and the forecasts) only if it is a
     * step: more than {@code scaling.window-z} standard deviations above the recent level λ̄, the mean rate of
     * the k = {@code predictor.window} intervals before it,
     * <pre>
     * z = (n − λ̄·s) / √(max(λ̄·s, 1) · (1 + 1/k))        (the window's noise and the level's)
     * </pre>
     * else it is that level's noise, and the forecasts, which it feeds, decide; the case is then T. A flash
     * crowd's first window (17 requests where the level carries 4.2: z = 5.5) scales up at once; a window of
     * 15 in two-burst's valley at 2 req/s (z = 1.1 against its level of 2.2) does not start a worker that
     * the forecasts do not ask for. A pool at 0 replicas always comes up for a window that needs it;
     * {@code window-z} 0 lets every window count.
     */
    private double windowNeed(Pool p, double window, double forecasts, Observation o, List<String> notes) {
        int target = states.get(p).target >= 0 ? states.get(p).target : o.ready().get(p);
        double level = forecast.recentLevel();
        if (config.scaling().windowZ() == 0 || window <= Math.max(forecasts, target) || target == 0 || !Double.isFinite(level)
                || !(o.intervalSeconds() > 0)) {
            return window;
        }
        double n = o.requestRate() * o.intervalSeconds();
        double expected = level * o.intervalSeconds();
        double z = (n - expected) / Math.sqrt(Math.max(expected, 1) * (1 + 1.0 / forecast.recentCount()));
        if (z >= config.scaling().windowZ()) {
            return window;
        }
        notes.add(String.format(Locale.ROOT, "%s: the interval's need %.2f is noise of the recent %.2f req/s (z %.1f < %.1f)",
                p.label(), window, level, z, config.scaling().windowZ()));
        return target;
    }

    /**
     * Replicas a pool keeps, beyond what the forecasts need, for the fastest rise the traffic has shown within
     * one cold start ({@link LoadForecast#rise}, remembered for {@code scaling.rise-memory}, by default
     * {@code scaling.rise-memory-cold-starts} of the cold start the lookahead uses): that rise's need
     * at the forecast request shape, at most {@code scaling.rise-replicas}. It counts only towards which
     * replicas are still needed — a pool never scales up for it — so it keeps, after a burst, the capacity a
     * rise as fast as the burst's would need before a replica started for it could serve. Two-burst's first
     * ramp (1 → 8 req/s in 40 s) shows ≈ 1.5 req/s within 15 s; at 2 req/s in the valley that keeps a second
     * worker the forecasts (0.6–0.7 replicas) would release, and the second ramp (2 → 9 req/s in 20 s) finds
     * two READY instead of one. After a slow ramp's burst (single-burst's 0.5 → 10 req/s in 90 s) it keeps
     * nothing at the 0.5 req/s that follows. Worst case: {@code rise-replicas} replicas for
     * {@code rise-memory} after each significant rise.
     */
    private double riseReserve(double needPerRate, double rise) {
        double reserve = needPerRate * rise;
        return Double.isFinite(reserve) && reserve > 0 ? Math.min(config.scaling().rise().replicas(), reserve) : 0;
    }

    /**
     * Whether the requests measured in this interval may have been served, in part, by pools of other sizes
     * than the READY counts now: the latest READY change is less than one interval plus the longest a
     * measured request ran (p90 TTFT + mean OSL × p90 ITL) ago. The correction factors compare what was
     * measured with what the model expects of the pools now, so such an interval is not comparable — a
     * request that queued on one overloaded worker, measured after a second one came up, reads as a
     * cluster slower than its profile (two-burst's valley raised f_itl from 1.31 to 1.51 this way, and kept
     * a second worker for 40 s at 2 req/s). Empty when comparable; else how long ago READY changed.
     */
    private Optional<Duration> servedByAnotherPool(Observation o, Instant now) {
        if (readyChanged == null) {
            return Optional.empty();
        }
        double ttft = Double.isFinite(o.ttftP90Ms()) ? o.ttftP90Ms() : 0;
        double itl = Double.isFinite(o.itlP90Ms()) ? o.itlP90Ms() : 0;
        double osl = Double.isFinite(o.oslMean()) ? o.oslMean() : 0;
        Duration span = config.interval().plusMillis(Math.round(ttft + osl * itl));
        Duration since = Duration.between(readyChanged, now);
        return since.compareTo(span) < 0 ? Optional.of(since) : Optional.empty();
    }

    /**
     * When replica {@code replica} of a pool needing {@code needPerRate} replicas per request/s is needed
     * again by the seasonal forecast: the first of the next {@code lag} intervals whose seasonal rate needs
     * more than (replica − 1)·downThreshold, less the {@code lookahead} intervals the horizon sizes ahead
     * (the replica is needed that much before the rise, to be ready for it).
     */
    private Optional<Duration> untilNeeded(double needPerRate, int replica, int lag, int lookahead) {
        double threshold = (replica - 1) * config.scaling().downThreshold();
        for (int k = 1; k <= lag; k++) {
            double s = forecast.seasonal(k);
            if (Double.isFinite(s) && s * needPerRate > threshold) {
                return Optional.of(config.interval().multipliedBy(Math.max(0, k - lookahead)));
            }
        }
        return Optional.of(ScaleStabilizer.NOT_WITHIN_A_PERIOD);
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

    /** Whether the pool that decodes also prefills: an aggregated pool without a prefill pool. */
    private boolean prefillsOnDecode() {
        return config.pools().contains(Pool.AGGREGATED) && !config.pools().contains(Pool.PREFILL);
    }

    /**
     * Whether the serving pool is under pressure now, and why: its need then has a reactive floor of one
     * replica more than the target (decode KV usage ≥ kvPressure; prefill backlog per replica longer than
     * the TTFT target to clear). Empty when it is not.
     */
    private Optional<String> pressure(Pool p, Observation o, Demand next) {
        boolean servesDecode = p == Pool.DECODE || (p == Pool.AGGREGATED && !config.pools().contains(Pool.DECODE));
        boolean servesPrefill = p == Pool.PREFILL || (p == Pool.AGGREGATED && prefillsOnDecode());
        if (servesDecode && o.decodeKvUsage() >= config.scaling().kvPressure()) {
            return Optional.of(String.format(Locale.ROOT, "%s KV usage %.2f ≥ %.2f", p.label(), o.decodeKvUsage(),
                    config.scaling().kvPressure()));
        }
        double islNow = Double.isFinite(o.islMean()) ? o.islMean() : next.isl();
        if (servesPrefill && o.prefillQueueTokens() > 0 && Double.isFinite(islNow)) {
            double perReplica = model.prefillCapacity(islNow, config.ttftTargetMs() / corrections.prefill()).tokensPerSecond();
            double backlogSeconds = o.prefillQueueTokens() / Math.max(1, o.ready().get(p)) / perReplica;
            if (backlogSeconds * 1000 > config.ttftTargetMs()) {
                return Optional.of(String.format(Locale.ROOT, "%s prefill backlog %.0f ms > TTFT target", p.label(),
                        backlogSeconds * 1000));
            }
        }
        return Optional.empty();
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

    private String reason(List<Demand> horizon, Duration readyTime, boolean measured, Optional<PeriodDetector.Period> period,
                          Map<Pool, Duration> breakEven, ReplicaPlanner.Sizing sizing, boolean conservative, boolean idle,
                          List<String> steps, List<String> notes) {
        StringBuilder b = new StringBuilder();
        Demand next = horizon.get(1);
        double peak = horizon.stream().mapToDouble(Demand::rate).filter(Double::isFinite).max().orElse(0);
        b.append(String.format(Locale.ROOT, "next %.2f req/s ISL %.0f OSL %.0f (peak %.2f req/s within +%d s; ready time %d s, %s); ",
                next.rate(), finite(next.isl()), finite(next.osl()), peak,
                (horizon.size() - 1) * config.interval().toSeconds(), Math.round(readyTime.toMillis() / 1000.0),
                measured ? "measured" : "configured"));
        period.ifPresent(p -> b.append(String.format(Locale.ROOT, "period %d s (r %.2f); ",
                config.interval().multipliedBy(p.lag()).toSeconds(), p.correlation())));
        breakEven.forEach((p, d) -> b.append(String.format(Locale.ROOT, "%s break-even %d s; ", p.label(), d.toSeconds())));
        sizing.tokensPerReplica().forEach((p, tps) -> b.append(String.format(Locale.ROOT, "%s %.0f tok/s per replica; ",
                p.label(), tps)));
        b.append(String.format(Locale.ROOT, "f_ttft %.2f f_itl %.2f; ", corrections.prefill(), corrections.decode()));
        if (!sizing.targetsReachable()) {
            b.append("a latency target is out of reach for one request; ");
        }
        if (conservative) {
            b.append(String.format(Locale.ROOT, "conservative: forecasts ran short by %.2f > %.2f; ", forecast.rateError().shortfall(),
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
