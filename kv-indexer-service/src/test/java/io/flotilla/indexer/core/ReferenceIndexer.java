package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The naive model the differential test compares {@link KvEventApplier} + {@link PrefixIndex}
 * against: a HashMap of worker id to HashSet of seq hashes, and the ARCHITECTURE rules written the
 * plain way (every input scans every worker for expired leases, matches are counted per worker).
 */
final class ReferenceIndexer {

    static final class Worker {
        long epoch;
        long cursor;
        WorkerState state = WorkerState.LIVE;
        final Set<Long> blocks = new HashSet<>();
        long deadline;
        long lastTs = Long.MIN_VALUE;
        long lastStatusTs = Long.MIN_VALUE;
        final Deque<Long> retired = new ArrayDeque<>();
        final TreeMap<Long, KvEventBatch> buffer = new TreeMap<>();
        long requestedAt;
        long expiredAt;
    }

    final Map<String, Worker> workers = new HashMap<>();
    private final ApplierSettings settings;
    private boolean feedHealthy = true;
    private long downSince;
    long applied, duplicates, gaps, staleBatches, staleStatuses, staleSnapshots, requested, reconciled, drift,
            expiries, stopped, epochChanges;

    ReferenceIndexer(ApplierSettings settings) {
        this.settings = settings;
    }

    Outcome onBatch(KvEventBatch b, long now) {
        expire(now);
        Worker w = workers.get(b.getWorkerId());
        if (w == null || w.epoch != b.getEpoch()) {
            boolean older = w != null && (w.retired.contains(b.getEpoch()) || (b.getSeq() != 1 && b.getTs() <= w.lastTs));
            if (older) {
                staleBatches++;
                return Outcome.STALE;
            }
            w = newEpoch(b.getWorkerId(), w, b.getEpoch());
            w.deadline = now + settings.provisionalLeaseMs();
        } else if (w.state == WorkerState.EXPIRED) {
            staleBatches++;
            return Outcome.STALE;
        }
        w.lastTs = Math.max(w.lastTs, b.getTs());
        if (b.getSeq() <= w.cursor || w.buffer.containsKey(b.getSeq())) {
            duplicates++;
            return Outcome.DUPLICATE;
        }
        if (w.state == WorkerState.UNVERIFIED) {
            w.buffer.put(b.getSeq(), b);
            while (w.buffer.size() > settings.maxBufferedBatches()) {
                w.buffer.pollFirstEntry();
            }
            return Outcome.BUFFERED;
        }
        if (b.getSeq() == w.cursor + 1) {
            apply(w, b);
            return Outcome.APPLIED;
        }
        gaps++;
        w.buffer.put(b.getSeq(), b);
        return Outcome.of(Verdict.BUFFERED, request(b.getWorkerId(), w, ReconcileRequest.Reason.GAP, now));
    }

    Outcome onStatus(WorkerStatus s, long now) {
        Outcome out = status(s, now);
        expire(now);
        return out;
    }

    private Outcome status(WorkerStatus s, long now) {
        Worker w = workers.get(s.getWorkerId());
        long deadline = now + (s.getLeaseMs() > 0 ? s.getLeaseMs() : settings.provisionalLeaseMs());
        boolean stop = s.getState() == io.flotilla.protocol.v1.WorkerState.WORKER_STATE_STOPPED;
        if (w != null && w.retired.contains(s.getEpoch())) {
            staleStatuses++;
            return Outcome.STALE;
        }
        if (w != null && w.epoch == s.getEpoch()) {
            if (s.getTs() <= w.lastStatusTs) {
                staleStatuses++;
                return Outcome.STALE;
            }
            w.lastStatusTs = s.getTs();
            w.lastTs = Math.max(w.lastTs, s.getTs());
            if (stop) {
                stopWorker(w, now);
                return Outcome.APPLIED;
            }
            if (w.state != WorkerState.EXPIRED) {
                w.deadline = Math.max(w.deadline, deadline);
                return Outcome.APPLIED;
            }
            w.deadline = deadline;
            return Outcome.of(Verdict.APPLIED, request(s.getWorkerId(), w, ReconcileRequest.Reason.REVIVED, now));
        }
        if (w != null && s.getTs() <= w.lastTs) {
            staleStatuses++;
            return Outcome.STALE;
        }
        w = newEpoch(s.getWorkerId(), w, s.getEpoch());
        w.lastStatusTs = s.getTs();
        w.lastTs = s.getTs();
        w.deadline = deadline;
        if (stop) {
            stopWorker(w, now);
        }
        return Outcome.APPLIED;
    }

    Outcome onLoad(WorkerLoad l, long now) {
        expire(now);
        Worker w = workers.get(l.getWorkerId());
        if (w == null || w.epoch != l.getEpoch() || w.state != WorkerState.LIVE || !l.hasIndexDigest()
                || l.getIndexDigest().getKvSeq() != w.cursor) {
            return Outcome.IGNORED;
        }
        long xor = 0;
        for (long h : w.blocks) {
            xor ^= h;
        }
        if (w.blocks.size() == l.getIndexDigest().getCount() && xor == l.getIndexDigest().getXor()) {
            return Outcome.APPLIED;
        }
        drift++;
        return Outcome.of(Verdict.APPLIED, request(l.getWorkerId(), w, ReconcileRequest.Reason.DRIFT, now));
    }

    Outcome onSnapshot(KvSnapshot s, long now) {
        expire(now);
        Worker w = workers.get(s.getWorkerId());
        if (w == null || w.state == WorkerState.EXPIRED || (w.epoch != s.getEpoch() && w.retired.contains(s.getEpoch()))) {
            staleSnapshots++;
            return Outcome.STALE;
        }
        if (w.epoch != s.getEpoch()) {
            long deadline = w.deadline;
            w = newEpoch(s.getWorkerId(), w, s.getEpoch());
            w.deadline = deadline;
        }
        if (s.getSeq() < w.cursor) {
            staleSnapshots++;
            if (w.state == WorkerState.UNVERIFIED) {
                return Outcome.of(Verdict.STALE, request(s.getWorkerId(), w, ReconcileRequest.Reason.STALE_SNAPSHOT, now));
            }
            return Outcome.STALE;
        }
        w.blocks.clear();
        w.blocks.addAll(s.getSeqHashesList());
        w.cursor = s.getSeq();
        reconciled++;
        for (KvEventBatch b : new ArrayList<>(w.buffer.values())) {
            w.buffer.remove(b.getSeq());
            if (b.getSeq() <= w.cursor) {
                duplicates++;
            } else if (b.getSeq() == w.cursor + 1) {
                apply(w, b);
            } else {
                w.buffer.put(b.getSeq(), b);
                gaps++;
                return Outcome.of(Verdict.APPLIED, request(s.getWorkerId(), w, ReconcileRequest.Reason.GAP, now));
            }
        }
        w.state = WorkerState.LIVE;
        return Outcome.APPLIED;
    }

    /** Returns ids expired and the retry requests, like {@link KvEventApplier#tick}. */
    List<ReconcileRequest> tick(long now) {
        expire(now);
        List<ReconcileRequest> out = new ArrayList<>();
        for (Map.Entry<String, Worker> e : workers.entrySet()) {
            Worker w = e.getValue();
            if (w.state == WorkerState.UNVERIFIED && now - w.requestedAt >= settings.reconcileRetryMs()) {
                out.add(request(e.getKey(), w, ReconcileRequest.Reason.RETRY, now));
            }
        }
        workers.values().removeIf(w -> w.state == WorkerState.EXPIRED && now - w.expiredAt > settings.expiredRetentionMs());
        return out;
    }

    void feedDown(long since) {
        if (feedHealthy) {
            downSince = since;
        }
        downSince = Math.min(downSince, since);
        feedHealthy = false;
    }

    void feedUp(long now) {
        if (!feedHealthy) {
            for (Worker w : workers.values()) {
                if (w.state != WorkerState.EXPIRED) {
                    w.deadline += now - downSince;
                }
            }
        }
        feedHealthy = true;
        expire(now);
    }

    /** Leading blocks per worker for {@code chain}; workers with none left out. */
    Map<String, Integer> matches(long[] chain) {
        Map<String, Integer> out = new HashMap<>();
        for (Map.Entry<String, Worker> e : workers.entrySet()) {
            int n = 0;
            while (n < chain.length && e.getValue().blocks.contains(chain[n])) {
                n++;
            }
            if (n > 0) {
                out.put(e.getKey(), n);
            }
        }
        return out;
    }

    Optional<Worker> worker(String id) {
        return Optional.ofNullable(workers.get(id));
    }

    private void apply(Worker w, KvEventBatch b) {
        for (KvEvent e : b.getEventsList()) {
            switch (e.getEventCase()) {
                case STORED -> e.getStored().getBlocksList().forEach(x -> w.blocks.add(x.getSeqHash()));
                case REMOVED -> w.blocks.removeAll(e.getRemoved().getSeqHashesList());
                case CLEARED -> w.blocks.clear();
                default -> { }
            }
        }
        w.cursor = b.getSeq();
        applied++;
    }

    private Worker newEpoch(String id, Worker w, long epoch) {
        if (w == null) {
            w = new Worker();
            workers.put(id, w);
        } else {
            retire(w, w.epoch);
            epochChanges++;
        }
        w.epoch = epoch;
        w.cursor = 0;
        w.state = WorkerState.LIVE;
        w.blocks.clear();
        w.buffer.clear();
        w.lastTs = Long.MIN_VALUE;
        w.lastStatusTs = Long.MIN_VALUE;
        return w;
    }

    private void retire(Worker w, long epoch) {
        if (!w.retired.contains(epoch)) {
            w.retired.addLast(epoch);
            if (w.retired.size() > settings.retiredEpochs()) {
                w.retired.removeFirst();
            }
        }
    }

    private void stopWorker(Worker w, long now) {
        retire(w, w.epoch);
        w.blocks.clear();
        w.buffer.clear();
        w.state = WorkerState.EXPIRED;
        w.expiredAt = now;
        stopped++;
    }

    private void expire(long now) {
        if (!feedHealthy) {
            return;
        }
        for (Worker w : workers.values()) {
            if (w.state != WorkerState.EXPIRED && now > w.deadline) {
                w.blocks.clear();
                w.buffer.clear();
                w.state = WorkerState.EXPIRED;
                w.expiredAt = now;
                expiries++;
            }
        }
    }

    private ReconcileRequest request(String id, Worker w, ReconcileRequest.Reason reason, long now) {
        w.state = WorkerState.UNVERIFIED;
        w.requestedAt = now;
        requested++;
        return new ReconcileRequest(id, w.epoch, w.cursor, reason);
    }
}
