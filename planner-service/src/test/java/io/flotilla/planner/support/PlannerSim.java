package io.flotilla.planner.support;

import io.flotilla.planner.core.ClusterView;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.model.PerformanceModel;
import io.flotilla.planner.model.SimulatedEngineProfile;
import io.flotilla.planner.plan.Planner;
import io.flotilla.planner.plan.PlannerConfig;
import io.flotilla.planner.plan.ScalingDecision;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Drives a {@link Planner} on a simulated clock, one interval per {@link #step}: the cluster is a
 * shadow (no connector state) whose READY workers equal the previous targets.
 */
public final class PlannerSim {

    public static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
    public static final PerformanceModel MODEL = new PerformanceModel(SimulatedEngineProfile.create());

    private final Planner planner;
    private final PlannerConfig config;
    private Instant now = T0;
    private PoolCounts ready;
    private final List<ScalingDecision> decisions = new ArrayList<>();
    private final List<PoolCounts> targets = new ArrayList<>();

    public PlannerSim(PlannerConfig config, PoolCounts initialReady) {
        this.config = config;
        this.planner = new Planner(config, MODEL);
        this.ready = initialReady;
    }

    public PoolCounts step(double rate, double isl, double osl) {
        return step(Observation.load(next(), seconds(), rate, isl, osl, ready), PoolCounts.NONE, Set.of());
    }

    public PoolCounts step(Observation o, PoolCounts current, Set<Pool> byHand) {
        ScalingDecision d = planner.plan(new ClusterView(o, current, byHand), o.end());
        decisions.add(d);
        PoolCounts t = d.targets();
        targets.add(t);
        ready = t;
        return t;
    }

    /** Advances the clock by one interval and returns the new instant. */
    public Instant next() {
        now = now.plus(config.interval());
        return now;
    }

    public double seconds() {
        return config.interval().toMillis() / 1000.0;
    }

    public Instant now() {
        return now;
    }

    public PoolCounts ready() {
        return ready;
    }

    public Planner planner() {
        return planner;
    }

    public ScalingDecision last() {
        return decisions.get(decisions.size() - 1);
    }

    public List<PoolCounts> targets() {
        return targets;
    }

    public List<ScalingDecision> decisions() {
        return decisions;
    }

    public List<Integer> series(Pool p) {
        return targets.stream().map(t -> t.get(p)).toList();
    }

    public Duration interval() {
        return config.interval();
    }
}
