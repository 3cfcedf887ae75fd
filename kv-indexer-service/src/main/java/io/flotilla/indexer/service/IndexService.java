package io.flotilla.indexer.service;

import io.flotilla.indexer.core.ApplierSettings;
import io.flotilla.indexer.core.IndexSnapshot;
import io.flotilla.indexer.core.KvEventApplier;
import io.flotilla.indexer.core.Outcome;
import io.flotilla.indexer.core.PrefixIndex;
import io.flotilla.indexer.core.ReconcileRequest;
import io.flotilla.indexer.core.WorkerMatch;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The indexer's shell around {@link KvEventApplier}: feeds in ({@link IndexFeeds}: kv-events, workers,
 * worker-load), reconciliation answers in, snapshots out.
 *
 * <p>One writer: every change to the applier runs on the {@code indexer-writer} thread, fed by a bounded
 * queue. Feed threads and reconciliation answers only enqueue (a full queue makes the feed wait, which is
 * Kafka back-pressure, not lost input); ticks, snapshot exports and rebuilds are queued the same way.
 * {@link #findMatches} reads the applier's lock-free view from any thread, filtered by model and block
 * size inside the applier. Time comes from the injected clock (monotonic in production: leases run on it).
 *
 * <p>Start-up: load the newest intact snapshot and replay {@code flotilla.kv-events} from its offsets (or
 * from the earliest offset when there is none, or when a rebuild is asked for). Membership is read first,
 * from the start of its compacted topic; the KV and load feeds start once it has caught up, so replayed
 * batches of a live worker meet its current lease, or after {@code membershipCatchUp} when Kafka is slow.
 *
 * <p>Sharded ({@code flotilla.indexer.sharding.enabled}): the KV feed is a consumer group member and this indexer
 * follows only the workers of its assigned partitions ({@link IndexShard}); nothing is restored at start-up, each
 * assignment is (snapshots per partition), and membership, load and reconciliation answers of other workers are
 * left out of the applier.
 */
public final class IndexService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(IndexService.class);
    static final int QUEUE = 4096;

    private final IndexerProperties properties;
    private final IndexFeeds feeds;
    private final Clock clock;
    private final SnapshotStore snapshots;
    private final Reconciler reconciler;
    /** Null unless this indexer is a shard. */
    private final IndexShard shard;
    /** Writer thread: the next assignment ignores snapshots and current content (a rebuild was asked for). */
    private boolean shardFromScratch;
    private final ThreadPoolExecutor writer;
    /** Written by the writer thread only. */
    private final Map<Integer, Long> kvOffsets = new HashMap<>();
    private final IndexFeeds.Sink sink = new IndexFeeds.Sink() {
        @Override
        public void kvRecords(List<IndexFeeds.KvRecord> records) {
            write(() -> applyKv(records));
        }

        @Override
        public void statuses(List<WorkerStatus> statuses) {
            write(() -> applyStatuses(statuses));
        }

        @Override
        public void loads(List<WorkerLoad> loads) {
            write(() -> applyLoads(loads));
        }

        @Override
        public Map<Integer, Long> assigned(Set<Integer> partitions, int partitionCount) {
            return call(() -> reassign(partitions, partitionCount));
        }

        @Override
        public void revoked(Set<Integer> partitions) {
            try {
                snapshotPartitions(partitions);
            } catch (IOException | RuntimeException e) {
                log.warn("could not write the snapshots of given-back partitions {}: {} (their next owner replays them)",
                        partitions, e.toString());
            }
        }
    };
    private volatile KvEventApplier applier;
    /** Told, on the writer thread, each applied KV batch's lag: from its worker sealing it to applied here (ms). */
    private volatile java.util.function.LongConsumer applyLag = lag -> { };
    private volatile long lastSnapshotMs = -1;
    private volatile long rebalances;
    /** Writer thread: KV start offsets waiting for membership to catch up, and since when; null once started. */
    private Map<Integer, Long> pendingKvFrom;
    private long membershipStartedAtMs;
    private boolean membershipStarted;

    public IndexService(IndexerProperties properties, IndexFeeds feeds, Clock clock) {
        this.properties = properties;
        this.feeds = feeds;
        this.clock = clock;
        this.snapshots = new SnapshotStore(Path.of(properties.snapshotDir()), properties.snapshotsKept());
        this.shard = properties.sharding().enabled()
                ? new IndexShard(Path.of(properties.snapshotDir()), properties.snapshotsKept()) : null;
        this.applier = newApplier();
        this.reconciler = new Reconciler(id -> applier.endpointOf(id), snapshot -> write(() -> applySnapshot(snapshot)),
                properties.reconcileConcurrency(), properties.reconcileTimeout(), properties.reconcileAttempts());
        BlockingQueue<Runnable> queue = new ArrayBlockingQueue<>(QUEUE);
        this.writer = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, queue, r -> {
            Thread t = new Thread(r, "indexer-writer");
            t.setDaemon(true);
            return t;
        }, (task, executor) -> {
            if (executor.isShutdown()) {
                return; // closing: late inputs are dropped, the snapshot already has what it needs
            }
            try {
                executor.getQueue().put(task); // back-pressure on the feed thread
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    /**
     * Registers the one listener told, on the writer thread (so it must not block), each applied KV batch's lag in
     * milliseconds: from the batch's {@code ts} (its worker sealed it, the worker's clock) to applied here. A replay
     * after a restart counts as lag too: the index is that far behind.
     */
    public void onApplyLag(java.util.function.LongConsumer listener) {
        applyLag = java.util.Objects.requireNonNull(listener, "listener");
    }

    /** Restores from the newest snapshot (unless a rebuild is asked for) and starts the feeds. */
    public void start() {
        call(() -> {
            Map<Integer, Long> from = Map.of();
            if (shard != null) {
                shardFromScratch = properties.rebuildOnStart(); // each assignment restores its partitions
            } else if (!properties.rebuildOnStart()) {
                Optional<SnapshotStore.Stored> stored = snapshots.loadNewest();
                if (stored.isPresent()) {
                    from = restore(stored.get());
                }
            } else {
                log.info("rebuilding the index by replaying {} from its earliest offset", Topics.KV_EVENTS.name());
            }
            startFeeds(from);
            return null;
        });
    }

    /** Writer thread. */
    private Map<Integer, Long> restore(SnapshotStore.Stored stored) {
        long begin = System.nanoTime();
        List<ReconcileRequest> again = applier.importSnapshot(stored.index(), clock.millis());
        kvOffsets.putAll(stored.offsets());
        again.forEach(reconciler::submit);
        lastSnapshotMs = stored.index().takenAtMs();
        log.info("restored {} blocks of {} workers from {} in {} ms; replaying kv-events from {}", stored.index().blocks(),
                stored.index().workers().size(), stored.file(), (System.nanoTime() - begin) / 1_000_000, stored.offsets());
        return stored.offsets();
    }

    /** Writer thread: membership now, the KV and load feeds once it has caught up (see {@link #tick}). */
    private void startFeeds(Map<Integer, Long> kvFrom) {
        feeds.startMembership(sink);
        membershipStarted = true;
        membershipStartedAtMs = clock.millis();
        pendingKvFrom = Map.copyOf(kvFrom);
    }

    /** Drops everything and replays {@code flotilla.kv-events} from its earliest offset. */
    public void rebuild() {
        log.info("rebuild requested: replaying {} from its earliest offset", Topics.KV_EVENTS.name());
        feeds.close(); // not on the writer: a feed thread may be waiting for queue space
        call(() -> {
            applier = newApplier();
            kvOffsets.clear();
            shardFromScratch = shard != null;
            startFeeds(Map.of());
            return null;
        });
    }

    private static KvEventApplier newApplier() {
        return new KvEventApplier(new PrefixIndex(), ApplierSettings.defaults());
    }

    private void applyKv(List<IndexFeeds.KvRecord> records) {
        long now = clock.millis();
        for (IndexFeeds.KvRecord r : records) {
            if (shard != null && !shard.ownsPartition(r.partition())) {
                continue; // read before this shard lost the partition
            }
            kvOffsets.put(r.partition(), r.offset() + 1);
            if (r.batch() != null) {
                follow(applier.onBatch(r.batch(), now));
                if (r.batch().getTs() > 0) {
                    applyLag.accept(Math.max(0, clock.millis() - r.batch().getTs()));
                }
            }
        }
    }

    private void applyStatuses(List<WorkerStatus> statuses) {
        long now = clock.millis();
        for (WorkerStatus s : statuses) {
            if (shard != null) {
                shard.remember(s, now);
                if (!shard.owns(s.getWorkerId())) {
                    continue;
                }
            }
            follow(applier.onStatus(s, now));
        }
    }

    private void applyLoads(List<WorkerLoad> loads) {
        long now = clock.millis();
        for (WorkerLoad l : loads) {
            if (shard != null && !shard.owns(l.getWorkerId())) {
                continue;
            }
            follow(applier.onLoad(l, now));
        }
    }

    private void applySnapshot(KvSnapshot snapshot) {
        if (shard != null && !shard.owns(snapshot.getWorkerId())) {
            return; // the worker's partition moved away while its snapshot was fetched
        }
        follow(applier.onSnapshot(snapshot, clock.millis()));
    }

    /**
     * Writer thread: the shard's new assignment. The index is rebuilt for it (kept partitions as they are, new ones
     * from their snapshots), then the owned workers' latest membership records are applied, as after a restart.
     */
    private Map<Integer, Long> reassign(Set<Integer> partitions, int partitionCount) {
        long now = clock.millis();
        IndexSnapshot current = shardFromScratch ? new IndexSnapshot(now, List.of()) : applier.exportSnapshot(now);
        IndexShard.Rebuilt rebuilt = shard.rebuild(current, Map.copyOf(kvOffsets), partitions, partitionCount,
                shardFromScratch, now);
        shardFromScratch = false;
        applier = newApplier();
        applier.importSnapshot(rebuilt.index(), now).forEach(reconciler::submit);
        kvOffsets.clear();
        kvOffsets.putAll(rebuilt.offsets());
        for (IndexShard.Heard h : shard.ownedStatuses()) {
            follow(applier.onStatus(h.status(), h.atMs())); // the lease runs from the record's receipt, as it did
        }
        shard.publish(); // leases of records heard long ago lapse on the next tick, which also carries the feed's health
        rebalances++;
        return rebuilt.offsets();
    }

    private void follow(Outcome outcome) {
        outcome.reconcile().ifPresent(reconciler::submit);
    }

    /**
     * Lease expiry, feed health, pending reconciliations, and the start of the KV feed once membership
     * has caught up (or {@code membershipCatchUp} passed); called every tick, runs on the writer.
     */
    public void tick() {
        write(this::tickOnWriter);
    }

    private void tickOnWriter() {
        long now = clock.millis();
        if (pendingKvFrom != null && (feeds.membershipCaughtUp()
                || now - membershipStartedAtMs >= properties.membershipCatchUp().toMillis())) {
            if (!feeds.membershipCaughtUp()) {
                log.warn("membership feed not caught up after {} (Kafka down?); starting the KV feed anyway",
                        properties.membershipCatchUp());
            }
            feeds.startKvAndLoad(pendingKvFrom, sink);
            pendingKvFrom = null;
        }
        if (membershipStarted) {
            if (feeds.membershipHealthy()) {
                if (!applier.isMembershipFeedHealthy()) {
                    applier.membershipFeedHealthy(now);
                }
            } else if (applier.isMembershipFeedHealthy() && pendingKvFrom == null) {
                long since = feeds.membershipUnhealthySinceMs();
                applier.membershipFeedUnhealthy(since > 0 ? Math.min(since, now) : now);
            }
        }
        applier.tick(now).reconcile().forEach(reconciler::submit);
    }

    /** Writes a snapshot with the offsets it corresponds to (exported on the writer, written here). */
    public Path snapshotNow() throws IOException {
        record Export(IndexSnapshot snapshot, Map<Integer, Long> offsets) {
        }
        if (shard != null) {
            record Parts(Map<Integer, IndexShard.Rebuilt> parts, long takenAtMs) {
            }
            Parts parts = call(() -> {
                IndexSnapshot all = applier.exportSnapshot(clock.millis());
                return new Parts(shard.split(all, kvOffsets), all.takenAtMs());
            });
            Path dir = shard.write(parts.parts());
            lastSnapshotMs = parts.takenAtMs();
            return dir;
        }
        Export e = call(() -> new Export(applier.exportSnapshot(clock.millis()), Map.copyOf(kvOffsets)));
        Path file = snapshots.write(e.snapshot(), e.offsets());
        lastSnapshotMs = e.snapshot().takenAtMs();
        return file;
    }

    /** Writes the snapshots of {@code partitions} of this shard (exported on the writer, written here). */
    private void snapshotPartitions(Set<Integer> partitions) throws IOException {
        Map<Integer, IndexShard.Rebuilt> parts = call(() -> {
            Map<Integer, IndexShard.Rebuilt> all = shard.split(applier.exportSnapshot(clock.millis()), kvOffsets);
            all.keySet().retainAll(partitions);
            return all;
        });
        shard.write(parts);
        log.info("wrote the snapshots of partitions {} before giving them back", new TreeSet<>(parts.keySet()));
    }

    /** Matched leading blocks per worker, only for workers of the request's block size and model. Any thread. */
    public List<WorkerMatch> findMatches(String model, int blockSize, long[] seqHashes) {
        return applier.findMatches(model, blockSize, seqHashes);
    }

    /** The partitions whose workers this shard answers for; null when this indexer is not a shard (it covers all). */
    public IndexShard.Coverage coverage() {
        return shard == null ? null : shard.coverage();
    }

    /** Newly assigned partitions this shard restored from a snapshot instead of replaying them from the start. */
    public long partitionsRestored() {
        return shard == null ? 0 : shard.restoredPartitions();
    }

    /** Assignments this shard has rebuilt for (0 when not a shard). */
    public long rebalances() {
        return rebalances;
    }

    public KvEventApplier applier() {
        return applier;
    }

    /** True once membership was read to its end and the KV feed started: the index reflects the cluster. */
    public boolean stateLoaded() {
        return feeds.membershipCaughtUp() || lastSnapshotMs >= 0;
    }

    public long snapshotAgeMs() {
        return lastSnapshotMs < 0 ? -1 : clock.millis() - lastSnapshotMs;
    }

    public long consumerLag() {
        return feeds.kvLag();
    }

    public boolean kafkaHealthy() {
        return feeds.membershipHealthy();
    }

    public long reconciliationFailures() {
        return reconciler.failures();
    }

    public long corruptSnapshots() {
        return snapshots.corruptSnapshots() + (shard == null ? 0 : shard.corruptSnapshots());
    }

    /** Inputs waiting for the writer. */
    public int queued() {
        return writer.getQueue().size();
    }

    private void write(Runnable task) {
        writer.execute(() -> {
            try {
                task.run();
            } catch (RuntimeException e) {
                log.error("indexer writer task failed; continuing", e);
            }
        });
    }

    /** Runs {@code task} on the writer and waits for its result. */
    private <T> T call(Supplier<T> task) {
        if (writer.isShutdown()) {
            throw new IllegalStateException("the indexer is closed");
        }
        CompletableFuture<T> result = new CompletableFuture<>();
        writer.execute(() -> {
            try {
                result.complete(task.get());
            } catch (RuntimeException e) {
                result.completeExceptionally(e);
            }
        });
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the indexer writer", e);
        } catch (ExecutionException e) {
            throw e.getCause() instanceof RuntimeException r ? r : new IllegalStateException(e.getCause());
        }
    }

    /**
     * Stops the feeds, writes a last snapshot, then stops the reconciler and the writer. Idempotent. A shard writes
     * its snapshot first: leaving the group hands its partitions over at once, and the next owner should find them.
     */
    @Override
    public synchronized void close() {
        if (writer.isShutdown()) {
            return;
        }
        if (shard != null) {
            shutdownSnapshot();
        }
        feeds.close();
        if (shard == null) {
            shutdownSnapshot();
        }
        reconciler.close();
        writer.shutdown();
        try {
            writer.awaitTermination(2, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void shutdownSnapshot() {
        try {
            snapshotNow();
        } catch (IOException | RuntimeException e) {
            log.error("could not write the shutdown snapshot: {}", e.toString());
        }
    }
}
