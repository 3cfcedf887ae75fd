package io.flotilla.planner.core;

import io.flotilla.protocol.v1.WorkerState;

import java.util.List;
import java.util.Optional;
import java.util.Set;

/** The planned model's workers with a valid lease, as of one instant. */
public record Fleet(List<FleetWorker> workers) {

    public static final Fleet EMPTY = new Fleet(List.of());

    public Fleet {
        workers = List.copyOf(workers);
    }

    public List<FleetWorker> in(Pool pool) {
        return workers.stream().filter(w -> w.pool() == pool).toList();
    }

    public Optional<FleetWorker> get(String id) {
        return workers.stream().filter(w -> w.id().equals(id)).findFirst();
    }

    /**
     * This fleet with the READY workers among {@code ids} counted as STARTING: live (part of their pool's size, drained
     * on scale-down) but not ready, as a multi-pod instance is until every rank is.
     */
    public Fleet starting(Set<String> ids) {
        if (ids.isEmpty()) {
            return this;
        }
        return new Fleet(workers.stream().map(w -> w.ready() && ids.contains(w.id())
                ? new FleetWorker(w.id(), w.pool(), WorkerState.WORKER_STATE_STARTING, w.endpoint(), w.running(), w.since())
                : w).toList());
    }

    /** READY workers per pool, for every pool (0 where none). */
    public PoolCounts ready() {
        PoolCounts c = PoolCounts.NONE;
        for (Pool p : Pool.values()) {
            c = c.with(p, (int) workers.stream().filter(w -> w.pool() == p && w.ready()).count());
        }
        return c;
    }
}
