package io.flotilla.indexer.service;

import io.flotilla.indexer.core.IndexSnapshot;
import io.flotilla.indexer.core.WorkerSnapshot;
import io.flotilla.protocol.kafka.WorkerPartitions;
import io.flotilla.protocol.v1.WorkerStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What makes an indexer one shard of a group: the {@code flotilla.kv-events} partitions it is assigned, the workers
 * they hold ({@link WorkerPartitions}), the latest membership record of every worker (so that a worker whose
 * partition moves here is known at once, without re-reading membership), and snapshots per partition, in
 * {@code <snapshot-dir>/partition-<n>}, each with its partition's next offset.
 *
 * <p>Invariant: the applier holds only workers of owned partitions, and {@code kvOffsets} names only owned partitions.
 * A rebalance rebuilds the index for the new assignment ({@link #rebuild}): kept partitions from the index as it is,
 * newly assigned ones from their newest snapshot (its workers, its offset) or, without one, from the earliest offset.
 * Either way a partition's workers are a snapshot of that partition at offset o plus every record from o, which is
 * what a single indexer's restart does for all partitions.
 *
 * <p>Writer thread only, except {@link #coverage()} and {@link #write}, which any thread may call.
 */
public final class IndexShard {

    private static final Logger log = LoggerFactory.getLogger(IndexShard.class);

    /** The partitions this shard answers for, out of {@code count}; published for readers after each rebuild. */
    public record Coverage(List<Integer> partitions, int count) {
    }

    /** A membership record and when this indexer read it: its lease runs from then, also when applied later. */
    record Heard(WorkerStatus status, long atMs) {
    }

    /** The index a new assignment starts from, and where each partition resumes (absent: the earliest offset). */
    record Rebuilt(IndexSnapshot index, Map<Integer, Long> offsets) {
    }

    private final Path dir;
    private final int keep;
    private final Map<Integer, SnapshotStore> stores = new ConcurrentHashMap<>();
    /** The latest membership record of every worker with when it was read (index clock), in the order read. */
    private final Map<String, Heard> statuses = new LinkedHashMap<>();
    private Set<Integer> owned = Set.of();
    private int count;
    private volatile Coverage coverage = new Coverage(List.of(), 0);
    private volatile long restored;

    IndexShard(Path dir, int keep) {
        this.dir = dir;
        this.keep = keep;
    }

    Coverage coverage() {
        return coverage;
    }

    /** Publishes the assignment to readers, once the index rebuilt for it is in place. */
    void publish() {
        coverage = new Coverage(List.copyOf(new TreeSet<>(owned)), count);
    }

    boolean ownsPartition(int partition) {
        return owned.contains(partition);
    }

    boolean owns(String workerId) {
        return count > 0 && owned.contains(WorkerPartitions.of(workerId, count));
    }

    /** Remembers the worker's latest membership record (of every worker: its partition may come here later). */
    void remember(WorkerStatus status, long atMs) {
        statuses.remove(status.getWorkerId());
        statuses.put(status.getWorkerId(), new Heard(status, atMs));
    }

    /** The latest membership records of the owned partitions' workers, in the order they were read. */
    List<Heard> ownedStatuses() {
        return statuses.values().stream().filter(h -> owns(h.status().getWorkerId())).toList();
    }

    /**
     * The index and offsets for the assignment {@code next} of {@code partitionCount}.
     *
     * @param current        the index as it is now (only owned partitions' workers), at {@code currentOffsets}
     * @param fromScratch    a rebuild was asked for: no snapshot and no current content, every partition from the start
     */
    Rebuilt rebuild(IndexSnapshot current, Map<Integer, Long> currentOffsets, Set<Integer> next, int partitionCount,
                    boolean fromScratch, long nowMs) {
        List<WorkerSnapshot> workers = new ArrayList<>();
        Map<Integer, Long> offsets = new HashMap<>();
        Set<Integer> kept = new TreeSet<>();
        if (!fromScratch && partitionCount == count) {
            for (int p : next) {
                if (owned.contains(p)) {
                    kept.add(p);
                    Long o = currentOffsets.get(p);
                    if (o != null) {
                        offsets.put(p, o);
                    }
                }
            }
            for (WorkerSnapshot w : current.workers()) {
                if (kept.contains(WorkerPartitions.of(w.workerId(), partitionCount))) {
                    workers.add(w);
                }
            }
        }
        for (int p : next) {
            if (kept.contains(p) || fromScratch) {
                continue;
            }
            Optional<SnapshotStore.Stored> stored = store(p).loadNewest();
            if (stored.isPresent() && stored.get().offsets().containsKey(p)) {
                for (WorkerSnapshot w : stored.get().index().workers()) {
                    if (WorkerPartitions.of(w.workerId(), partitionCount) == p) {
                        workers.add(w);
                    }
                }
                offsets.put(p, stored.get().offsets().get(p));
                restored++;
            }
        }
        log.info("shard rebuilt for partitions {} of {}: kept {}, restored {} from snapshots, the rest from the start",
                next, partitionCount, kept, offsets.keySet().stream().filter(p -> !kept.contains(p)).toList());
        owned = Set.copyOf(next);
        count = partitionCount;
        return new Rebuilt(new IndexSnapshot(nowMs, workers), offsets);
    }

    /**
     * The index split by owned partition, each part with its partition's next offset (none for a partition read
     * from nowhere yet: it restarts from the start). Writer thread: it reads the assignment.
     */
    Map<Integer, Rebuilt> split(IndexSnapshot index, Map<Integer, Long> offsets) {
        Map<Integer, List<WorkerSnapshot>> byPartition = new HashMap<>();
        for (int p : owned) {
            byPartition.put(p, new ArrayList<>());
        }
        for (WorkerSnapshot w : index.workers()) {
            List<WorkerSnapshot> list = byPartition.get(WorkerPartitions.of(w.workerId(), count));
            if (list != null) {
                list.add(w);
            }
        }
        Map<Integer, Rebuilt> out = new HashMap<>();
        byPartition.forEach((p, workers) -> {
            Long o = offsets.get(p);
            out.put(p, new Rebuilt(new IndexSnapshot(index.takenAtMs(), workers), o == null ? Map.of() : Map.of(p, o)));
        });
        return out;
    }

    /** Writes each part of {@link #split} to its partition's store; returns the shard's snapshot directory. Any thread. */
    Path write(Map<Integer, Rebuilt> parts) throws IOException {
        for (var e : parts.entrySet()) {
            store(e.getKey()).write(e.getValue().index(), e.getValue().offsets());
        }
        return dir;
    }

    /** Newly assigned partitions restored from a snapshot (the others replayed from the start). Any thread. */
    long restoredPartitions() {
        return restored;
    }

    long corruptSnapshots() {
        return stores.values().stream().mapToLong(SnapshotStore::corruptSnapshots).sum();
    }

    private SnapshotStore store(int partition) {
        return stores.computeIfAbsent(partition, p -> new SnapshotStore(dir.resolve("partition-" + p), keep));
    }
}
