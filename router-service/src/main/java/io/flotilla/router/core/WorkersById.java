package io.flotilla.router.core;

import java.util.AbstractList;
import java.util.RandomAccess;
import java.util.SortedMap;

/**
 * An immutable list of workers known to be in id order because it was copied from a map sorted by id, so
 * a {@link ClusterSnapshot} built from it skips its own order check (at thousands of workers that check
 * alone costs more than a pruned decision).
 */
public final class WorkersById extends AbstractList<WorkerView> implements RandomAccess {

    private final WorkerView[] workers;

    private WorkersById(WorkerView[] workers) {
        this.workers = workers;
    }

    /** The values of {@code byId}, which must be keyed by worker id in natural order. */
    public static WorkersById of(SortedMap<String, WorkerView> byId) {
        if (byId.comparator() != null) {
            throw new IllegalArgumentException("workers must be keyed by id in natural order");
        }
        return new WorkersById(byId.values().toArray(new WorkerView[0]));
    }

    @Override
    public WorkerView get(int index) {
        return workers[index];
    }

    @Override
    public int size() {
        return workers.length;
    }
}
