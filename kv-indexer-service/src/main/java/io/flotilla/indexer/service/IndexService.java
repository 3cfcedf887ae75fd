package io.flotilla.indexer.service;

import io.flotilla.indexer.config.IndexerProperties;
import io.flotilla.indexer.core.ApplierSettings;
import io.flotilla.indexer.core.IndexSnapshot;
import io.flotilla.indexer.core.KvEventApplier;
import io.flotilla.indexer.core.Outcome;
import io.flotilla.indexer.core.PrefixIndex;
import io.flotilla.indexer.core.ReconcileRequest;
import io.flotilla.indexer.core.WorkerMatch;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.TopicTailer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The indexer's shell around {@link KvEventApplier}: three Kafka feeds in (kv-events, workers,
 * worker-load), reconciliation answers in, snapshots out. Every change to the applier happens under
 * one lock (the applier is single-writer); {@link #findMatches} reads the index without it.
 *
 * <p>Start-up: load the newest intact snapshot and replay {@code flotilla.kv-events} from its
 * offsets (or from the earliest offset when there is none, or when a rebuild is asked for);
 * membership is read from the start of its compacted topic, load reports from now on.
 */
public final class IndexService implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(IndexService.class);

    private final IndexerProperties properties;
    private final String bootstrap;
    private final Clock clock;
    private final SnapshotStore snapshots;
    private final Reconciler reconciler;
    private final ReentrantLock writer = new ReentrantLock();
    private final Map<String, WorkerStatus> statuses = new ConcurrentHashMap<>();
    private final Map<Integer, Long> kvOffsets = new HashMap<>();
    private volatile KvEventApplier applier;
    private volatile long lastSnapshotMs = -1;
    private volatile long restoredBlocks;
    private List<TopicTailer<?>> tailers = List.of();
    private TopicTailer<KvEventBatch> kvTailer;
    private TopicTailer<WorkerStatus> membershipTailer;

    public IndexService(IndexerProperties properties, String bootstrap, Clock clock) {
        this.properties = properties;
        this.bootstrap = bootstrap;
        this.clock = clock;
        this.snapshots = new SnapshotStore(Path.of(properties.snapshotDir()), properties.snapshotsKept());
        this.reconciler = new Reconciler(this::endpointOf, this::onSnapshot, properties.reconcileConcurrency(),
                properties.reconcileTimeout(), properties.reconcileAttempts());
        this.applier = newApplier();
    }

    /** Restores from the newest snapshot (unless a rebuild is asked for) and starts the feeds. */
    public void start() {
        Map<Integer, Long> from = Map.of();
        if (!properties.rebuildOnStart()) {
            Optional<SnapshotStore.Stored> stored = snapshots.loadNewest();
            if (stored.isPresent()) {
                from = restore(stored.get());
            }
        } else {
            log.info("rebuilding the index by replaying {} from its earliest offset", Topics.KV_EVENTS.name());
        }
        startFeeds(from);
    }

    private Map<Integer, Long> restore(SnapshotStore.Stored stored) {
        long begin = System.nanoTime();
        writer.lock();
        try {
            List<ReconcileRequest> again = applier.importSnapshot(stored.index(), clock.millis());
            kvOffsets.putAll(stored.offsets());
            again.forEach(reconciler::submit);
            restoredBlocks = stored.index().blocks();
        } finally {
            writer.unlock();
        }
        lastSnapshotMs = stored.index().takenAtMs();
        log.info("restored {} blocks of {} workers from {} in {} ms; replaying kv-events from {}", restoredBlocks,
                stored.index().workers().size(), stored.file(), (System.nanoTime() - begin) / 1_000_000, stored.offsets());
        return stored.offsets();
    }

    private void startFeeds(Map<Integer, Long> kvFrom) {
        Map<TopicPartition, Long> start = new HashMap<>();
        kvFrom.forEach((p, o) -> start.put(new TopicPartition(Topics.KV_EVENTS.name(), p), o));
        membershipTailer = new TopicTailer<>("indexer", bootstrap, Topics.WORKERS.name(), new ProtoDeserializer.WorkerStatuses(),
                TopicTailer.Start.EARLIEST, Map.of(), this::onStatuses, clock).start();
        // Membership first: replayed KV batches of a live worker must meet its current lease, not a
        // provisional one counted from an old batch timestamp (which would drop them as stale).
        awaitCaughtUp(membershipTailer, 15_000);
        kvTailer = new TopicTailer<>("indexer", bootstrap, Topics.KV_EVENTS.name(), new ProtoDeserializer.KvEventBatches(),
                TopicTailer.Start.EARLIEST, start, this::onBatches, clock);
        TopicTailer<WorkerLoad> loadTailer = new TopicTailer<>("indexer", bootstrap, Topics.WORKER_LOAD.name(),
                new ProtoDeserializer.WorkerLoads(), TopicTailer.Start.LATEST, Map.of(), this::onLoads, clock);
        tailers = List.of(membershipTailer, kvTailer.start(), loadTailer.start());
    }

    private static void awaitCaughtUp(TopicTailer<?> tailer, long timeoutMs) {
        long deadline = System.currentTimeMillis() + timeoutMs;
        while (tailer.lag() != 0 && System.currentTimeMillis() < deadline) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
        if (tailer.lag() != 0) {
            log.warn("membership feed not caught up after {} ms (Kafka down?); starting the KV feed anyway", timeoutMs);
        }
    }

    private void stopFeeds() {
        tailers.forEach(TopicTailer::close);
        tailers = List.of();
    }

    /** Drops everything and replays {@code flotilla.kv-events} from its earliest offset. */
    public synchronized void rebuild() {
        log.info("rebuild requested: replaying {} from its earliest offset", Topics.KV_EVENTS.name());
        stopFeeds();
        writer.lock();
        try {
            applier = newApplier();
            kvOffsets.clear();
            statuses.clear();
        } finally {
            writer.unlock();
        }
        startFeeds(Map.of());
    }

    private KvEventApplier newApplier() {
        return new KvEventApplier(new PrefixIndex(), ApplierSettings.defaults());
    }

    void onBatches(List<ConsumerRecord<String, KvEventBatch>> records) {
        long now = clock.millis();
        List<ReconcileRequest> todo = new ArrayList<>();
        writer.lock();
        try {
            for (ConsumerRecord<String, KvEventBatch> r : records) {
                kvOffsets.put(r.partition(), r.offset() + 1);
                if (r.value() != null) {
                    collect(applier.onBatch(r.value(), now), todo);
                }
            }
        } finally {
            writer.unlock();
        }
        todo.forEach(reconciler::submit);
    }

    void onStatuses(List<ConsumerRecord<String, WorkerStatus>> records) {
        long now = clock.millis();
        List<ReconcileRequest> todo = new ArrayList<>();
        writer.lock();
        try {
            for (ConsumerRecord<String, WorkerStatus> r : records) {
                if (r.value() != null) {
                    statuses.put(r.value().getWorkerId(), r.value());
                    collect(applier.onStatus(r.value(), now), todo);
                }
            }
        } finally {
            writer.unlock();
        }
        todo.forEach(reconciler::submit);
    }

    void onLoads(List<ConsumerRecord<String, WorkerLoad>> records) {
        long now = clock.millis();
        List<ReconcileRequest> todo = new ArrayList<>();
        writer.lock();
        try {
            for (ConsumerRecord<String, WorkerLoad> r : records) {
                if (r.value() != null) {
                    collect(applier.onLoad(r.value(), now), todo);
                }
            }
        } finally {
            writer.unlock();
        }
        todo.forEach(reconciler::submit);
    }

    void onSnapshot(KvSnapshot snapshot) {
        writer.lock();
        try {
            collect(applier.onSnapshot(snapshot, clock.millis()), new ArrayList<>());
        } finally {
            writer.unlock();
        }
    }

    /** Lease expiry, feed health and pending reconciliations; called every tick. */
    public void tick() {
        long now = clock.millis();
        KvEventApplier.TickResult result;
        writer.lock();
        try {
            TopicTailer<WorkerStatus> m = membershipTailer;
            if (m != null) {
                if (m.healthy()) {
                    if (!applier.isMembershipFeedHealthy()) {
                        applier.membershipFeedHealthy(now);
                    }
                } else if (applier.isMembershipFeedHealthy()) {
                    applier.membershipFeedUnhealthy(m.unhealthySinceMs() > 0 ? m.unhealthySinceMs() : now);
                }
            }
            result = applier.tick(now);
        } finally {
            writer.unlock();
        }
        result.reconcile().forEach(reconciler::submit);
    }

    /** Writes a snapshot with the offsets it corresponds to. */
    public Path snapshotNow() throws IOException {
        IndexSnapshot snap;
        Map<Integer, Long> offsets;
        writer.lock();
        try {
            snap = applier.exportSnapshot(clock.millis());
            offsets = Map.copyOf(kvOffsets);
        } finally {
            writer.unlock();
        }
        Path file = snapshots.write(snap, offsets);
        lastSnapshotMs = snap.takenAtMs();
        return file;
    }

    /** Matched leading blocks per worker, only for workers of the request's block size and model. */
    public List<WorkerMatch> findMatches(String model, int blockSize, long[] seqHashes) {
        List<WorkerMatch> all = applier.index().findMatches(seqHashes);
        List<WorkerMatch> out = new ArrayList<>(all.size());
        for (WorkerMatch m : all) {
            WorkerStatus s = statuses.get(m.workerId());
            if (s != null && ((blockSize > 0 && s.getBlockSize() != blockSize)
                    || (!model.isEmpty() && !s.getModel().equals(model)))) {
                continue; // never compare across block sizes or models
            }
            out.add(m);
        }
        return out;
    }

    public KvEventApplier applier() {
        return applier;
    }

    public long snapshotAgeMs() {
        return lastSnapshotMs < 0 ? -1 : clock.millis() - lastSnapshotMs;
    }

    public long consumerLag() {
        TopicTailer<KvEventBatch> t = kvTailer;
        return t == null ? -1 : t.lag();
    }

    public boolean kafkaHealthy() {
        TopicTailer<WorkerStatus> m = membershipTailer;
        return m != null && m.healthy();
    }

    public long reconciliationFailures() {
        return reconciler.failures();
    }

    public long corruptSnapshots() {
        return snapshots.corruptSnapshots();
    }

    private String endpointOf(String workerId) {
        WorkerStatus s = statuses.get(workerId);
        return s == null ? null : s.getEndpoint();
    }

    private static void collect(Outcome outcome, List<ReconcileRequest> todo) {
        outcome.reconcile().ifPresent(todo::add);
    }

    /** Writes a last snapshot, then stops the feeds and the reconciler. */
    @Override
    public void close() {
        try {
            snapshotNow();
        } catch (IOException | RuntimeException e) {
            log.error("could not write the shutdown snapshot: {}", e.toString());
        }
        stopFeeds();
        reconciler.close();
    }
}
