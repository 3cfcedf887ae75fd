package io.flotilla.planner.core;

import java.util.List;
import java.util.Optional;

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

    /** READY workers per pool, for every pool (0 where none). */
    public PoolCounts ready() {
        PoolCounts c = PoolCounts.NONE;
        for (Pool p : Pool.values()) {
            c = c.with(p, (int) workers.stream().filter(w -> w.pool() == p && w.ready()).count());
        }
        return c;
    }
}
