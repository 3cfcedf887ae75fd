package io.flotilla.planner.support;

import io.flotilla.planner.connector.ConnectorView;
import io.flotilla.planner.connector.ScalingConnector;
import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The {@link ScalingConnector} fake: replicas in memory, hand edits by {@link #setByHand}, failures on demand. */
public final class InMemoryConnector implements ScalingConnector {

    private PoolCounts replicas;
    private PoolCounts lastApplied = PoolCounts.NONE;
    private final List<PoolCounts> applied = new ArrayList<>();
    private boolean failing;

    public InMemoryConnector(PoolCounts initial) {
        this.replicas = initial;
    }

    @Override
    public String name() {
        return "in-memory";
    }

    @Override
    public synchronized ConnectorView observe(Fleet fleet) {
        Set<Pool> byHand = EnumSet.noneOf(Pool.class);
        for (Pool p : lastApplied.pools()) {
            if (replicas.get(p) != lastApplied.get(p)) {
                byHand.add(p);
            }
        }
        return new ConnectorView(replicas, byHand);
    }

    @Override
    public synchronized Optional<PoolCounts> apply(PoolCounts targets, Fleet fleet) {
        if (failing) {
            throw new IllegalStateException("connector down");
        }
        for (Pool p : targets.pools()) {
            replicas = replicas.with(p, targets.get(p));
        }
        lastApplied = targets;
        applied.add(targets);
        return Optional.of(targets);
    }

    public synchronized void setByHand(Pool pool, int n) {
        replicas = replicas.with(pool, n);
    }

    public synchronized void failing(boolean f) {
        failing = f;
    }

    public synchronized PoolCounts replicas() {
        return replicas;
    }

    public synchronized List<PoolCounts> applied() {
        return List.copyOf(applied);
    }
}
