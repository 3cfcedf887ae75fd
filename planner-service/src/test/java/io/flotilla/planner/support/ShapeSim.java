package io.flotilla.planner.support;

import io.flotilla.planner.core.ClusterView;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.plan.Demand;
import io.flotilla.planner.plan.Planner;
import io.flotilla.planner.plan.PlannerConfig;
import io.flotilla.planner.plan.ReplicaPlanner;
import io.flotilla.planner.plan.ScalingDecision;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * An aggregated pool driven by a {@link Planner} through a traffic shape, on a simulated clock. Each
 * interval's requests are a seeded Poisson draw around the shape's rate, or a recorded trace's arrivals
 * ({@link #replay}); a replica the planner adds is
 * paid for from the decision on and READY {@code coldStart} intervals later; a replica it removes
 * (the newest first, starting ones before ready ones) stops at once. Per interval: the target, the
 * READY and the paid (starting + READY) replicas, and the replicas the shape's rate at that time needs
 * with no forecast ({@code required}, from the same model): an interval with fewer READY than required
 * is where a real cluster would miss its SLO.
 */
public final class ShapeSim {

    /** A piece of the rate curve: {@code seconds} long, linear from {@code from} to {@code to} requests/s. */
    public record Phase(double seconds, double from, double to) {
    }

    /** What one run did, per interval. */
    public record Result(Duration interval, List<Double> rates, List<Integer> arrivals, List<Integer> targets, List<Integer> ready,
                         List<Integer> paid, List<Integer> required, List<Double> perReplica, List<ScalingDecision> decisions,
                         int peakStatic) {

        public double workerSeconds() {
            return paid.stream().mapToInt(Integer::intValue).sum() * interval.toMillis() / 1000.0;
        }

        /** Worker-seconds of a static pool of {@code peakStatic} replicas over the same time. */
        public double peakStaticWorkerSeconds() {
            return (double) peakStatic * paid.size() * interval.toMillis() / 1000.0;
        }

        public double share() {
            return workerSeconds() / peakStaticWorkerSeconds();
        }

        /**
         * The same arrivals served by the static pool instead: {@code peakStatic} replicas READY (and paid) throughout.
         * Its {@link #share} is 1; its SLO proxies are what the static pool buys on this run's draws.
         */
        public Result staticPool() {
            List<Integer> fixed = java.util.Collections.nCopies(ready.size(), peakStatic);
            return new Result(interval, rates, arrivals, fixed, fixed, fixed, required, perReplica, List.of(), peakStatic);
        }

        /** Intervals with fewer READY replicas than the rate needed. */
        public int shortIntervals() {
            int n = 0;
            for (int i = 0; i < ready.size(); i++) {
                n += ready.get(i) < required.get(i) ? 1 : 0;
            }
            return n;
        }

        /**
         * The SLO proxy: the share of the requests that arrived in an interval with at least as many READY
         * replicas as their rate needed (1 when none arrived). It does not carry a backlog from a short interval
         * into the next, so it is an upper bound on what a cluster with these READY counts attains.
         */
        public double metShare() {
            long all = 0;
            long met = 0;
            for (int i = 0; i < ready.size(); i++) {
                all += arrivals.get(i);
                met += ready.get(i) >= required.get(i) ? arrivals.get(i) : 0;
            }
            return all == 0 ? 1 : (double) met / all;
        }

        /**
         * The SLO proxy with a backlog: each interval the READY replicas serve {@code perReplica} req/s each (what
         * the model says one carries at the targets, headroom included); what they cannot serve waits, and an
         * interval's requests count as met when the backlog at its end is one that the READY replicas clear
         * within {@code drainSeconds} (the TTFT target). A short interval then costs the intervals after it
         * until its backlog is served, and a deficit of a fraction of a replica costs little.
         */
        public double metShareWithBacklog(double drainSeconds) {
            double dt = interval.toMillis() / 1000.0;
            double backlog = 0;
            long all = 0;
            long met = 0;
            for (int i = 0; i < ready.size(); i++) {
                double capacity = ready.get(i) * perReplica.get(i);
                backlog = Math.max(0, backlog + arrivals.get(i) - capacity * dt);
                all += arrivals.get(i);
                met += backlog <= capacity * drainSeconds ? arrivals.get(i) : 0;
            }
            return all == 0 ? 1 : (double) met / all;
        }

        /** Target changes: +1 for each scale-up, −1 for each scale-down, in order. */
        public List<Integer> events() {
            List<Integer> out = new ArrayList<>();
            for (int i = 1; i < targets.size(); i++) {
                int d = Integer.signum(targets.get(i) - targets.get(i - 1));
                if (d != 0) {
                    out.add(d);
                }
            }
            return out;
        }

        public long ups() {
            return events().stream().filter(e -> e > 0).count();
        }

        public long downs() {
            return events().stream().filter(e -> e < 0).count();
        }

        /** Intervals at which the target changed, with the direction (index, ±1). */
        public List<int[]> changes() {
            List<int[]> out = new ArrayList<>();
            for (int i = 1; i < targets.size(); i++) {
                int d = Integer.signum(targets.get(i) - targets.get(i - 1));
                if (d != 0) {
                    out.add(new int[] {i, d});
                }
            }
            return out;
        }
    }

    private final PlannerConfig config;
    private final PerformanceModel model;
    private final int coldStart;
    private final long seed;
    private final ReplicaPlanner sizer;

    public ShapeSim(PlannerConfig config, PerformanceModel model, int coldStartIntervals, long seed) {
        this.config = config;
        this.model = model;
        this.coldStart = coldStartIntervals;
        this.seed = seed;
        this.sizer = new ReplicaPlanner(model, config.ttftTargetMs(), config.itlTargetMs(), config.headroom());
    }

    /** Phases from triples: seconds, from, to, seconds, from, to, … */
    public static List<Phase> phases(double... triples) {
        List<Phase> out = new ArrayList<>();
        for (int i = 0; i + 2 < triples.length; i += 3) {
            out.add(new Phase(triples[i], triples[i + 1], triples[i + 2]));
        }
        return out;
    }

    /** {@code cycle} repeated {@code times} times. */
    public static List<Phase> repeat(List<Phase> cycle, int times) {
        List<Phase> out = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            out.addAll(cycle);
        }
        return out;
    }

    /** The rate of the curve {@code t} seconds in (0 after its end). */
    public static double rateAt(List<Phase> phases, double t) {
        double start = 0;
        for (Phase p : phases) {
            if (t < start + p.seconds()) {
                return p.from() + (p.to() - p.from()) * (t - start) / p.seconds();
            }
            start += p.seconds();
        }
        return 0;
    }

    /**
     * Runs {@code quiet} intervals at {@code quietRate}, then the shape, with prompts of {@code isl} and outputs of
     * {@code osl} tokens, against a static pool sized for the highest rate drawn.
     */
    public Result run(List<Phase> shape, double isl, double osl, int quiet, double quietRate) {
        return run(shape, isl, osl, quiet, quietRate, 0);
    }

    /** As {@link #run(List, double, double, int, double)}, against a static pool of {@code peakStatic} replicas (0: sized for the peak). */
    public Result run(List<Phase> shape, double isl, double osl, int quiet, double quietRate, int peakStatic) {
        SplittableRandom random = new SplittableRandom(seed);
        double dt = config.interval().toMillis() / 1000.0;
        double total = shape.stream().mapToDouble(Phase::seconds).sum();
        int steps = quiet + (int) Math.ceil(total / dt);
        List<Interval> intervals = new ArrayList<>();
        double peak = 0;
        for (int i = 0; i < steps; i++) {
            double mid = (i - quiet + 0.5) * dt;
            double rate = i < quiet ? quietRate : rateAt(shape, mid);
            peak = Math.max(peak, rate);
            intervals.add(new Interval(poisson(random, rate * dt), isl, osl, rate));
        }
        return drive(intervals, peakStatic > 0 ? peakStatic : Math.max(1, needed(sizer, peak, isl, osl)));
    }

    /** One interval's arrivals: their count, mean ISL and OSL, and the rate they were drawn at (what the load needs). */
    public record Interval(int requests, double isl, double osl, double rate) {
    }

    /**
     * Replays recorded arrivals (one {@link Interval} per planning interval, its rate the count's) after
     * {@code quiet} empty intervals, against a static pool of {@code peakStatic} replicas.
     */
    public Result replay(List<Interval> recorded, int quiet, int peakStatic) {
        List<Interval> intervals = new ArrayList<>();
        for (int i = 0; i < quiet; i++) {
            intervals.add(new Interval(0, recorded.get(0).isl(), recorded.get(0).osl(), 0));
        }
        intervals.addAll(recorded);
        return drive(intervals, peakStatic);
    }

    private Result drive(List<Interval> intervals, int peakStatic) {
        Planner planner = new Planner(config, model);
        double dt = config.interval().toMillis() / 1000.0;
        List<Integer> startedAt = new ArrayList<>(); // one entry per live replica: the interval its start was decided
        startedAt.add(-coldStart);
        Instant now = PlannerSim.T0;
        List<Double> rates = new ArrayList<>();
        List<Integer> arrivals = new ArrayList<>();
        List<Integer> targets = new ArrayList<>();
        List<Integer> ready = new ArrayList<>();
        List<Integer> paid = new ArrayList<>();
        List<Integer> required = new ArrayList<>();
        List<Double> perReplica = new ArrayList<>();
        List<ScalingDecision> decisions = new ArrayList<>();
        for (int i = 0; i < intervals.size(); i++) {
            Interval in = intervals.get(i);
            int readyNow = 0;
            for (int s : startedAt) {
                readyNow += i - s >= coldStart ? 1 : 0;
            }
            paid.add(startedAt.size());
            ready.add(readyNow);
            rates.add(in.rate());
            arrivals.add(in.requests());
            required.add(needed(sizer, in.rate(), in.isl(), in.osl()));
            double nominal = Math.max(in.rate(), 1);
            perReplica.add(nominal / sizer.size(List.of(new Demand(nominal, in.isl(), in.osl(), 0)), 1, 1).need(Pool.AGGREGATED));
            now = now.plus(config.interval());
            Observation o = Observation.load(now, dt, in.requests() / dt, in.isl(), in.osl(), PoolCounts.of(Pool.AGGREGATED, readyNow));
            ScalingDecision d = planner.plan(new ClusterView(o, PoolCounts.NONE, java.util.Set.of()), now);
            decisions.add(d);
            int target = d.targets().get(Pool.AGGREGATED);
            targets.add(target);
            while (startedAt.size() < target) {
                startedAt.add(i + 1);
            }
            while (startedAt.size() > target) {
                startedAt.remove(startedAt.size() - 1); // the newest: starting replicas before ready ones
            }
        }
        return new Result(config.interval(), rates, arrivals, targets, ready, paid, required, perReplica, decisions, peakStatic);
    }

    /** Replicas a steady {@code rate} needs, from the model alone (headroom included, no forecast, no correction). */
    public static int needed(ReplicaPlanner sizer, double rate, double isl, double osl) {
        if (rate <= 0) {
            return 1;
        }
        return Math.max(1, (int) Math.ceil(sizer.size(List.of(new Demand(rate, isl, osl, 0)), 1, 1).need(Pool.AGGREGATED) - 1e-9));
    }

    /** Knuth's Poisson sampler: requests in an interval whose expected count is {@code mean}. */
    public static int poisson(SplittableRandom random, double mean) {
        if (mean <= 0) {
            return 0;
        }
        double limit = Math.exp(-mean);
        double p = 1;
        int k = -1;
        do {
            k++;
            p *= random.nextDouble();
        } while (p > limit);
        return k;
    }
}
