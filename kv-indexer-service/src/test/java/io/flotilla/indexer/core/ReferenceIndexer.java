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
        /** Per tier (0 device, 1 host, 2 disk) the blocks held there. */
        final List<Set<Long>> tiers = List.of(new HashSet<>(), new HashSet<>(), new HashSet<>());
        /** The device tier. */
        final Set<Long> blocks = tiers.get(0);

        void clearAll() {
            tiers.forEach(Set::clear);
        }
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
        var d = l.getIndexDigest();
        long[] counts = {d.getCount(), d.getHostCount(), d.getDiskCount()};
        long[] xors = {d.getXor(), d.getHostXor(), d.getDiskXor()};
        boolean same = true;
        for (int t = 0; t < 3; t++) {
            long xor = 0;
            for (long h : w.tiers.get(t)) {
                xor ^= h;
            }
            same &= w.tiers.get(t).size() == counts[t] && xor == xors[t];
        }
        if (same) {
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
        w.clearAll();
        w.blocks.addAll(s.getSeqHashesList());
        w.tiers.get(1).addAll(s.getHostSeqHashesList());
        w.tiers.get(2).addAll(s.getDiskSeqHashesList());
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

    /**
     * Per worker for {@code chain}: its leading device blocks, and its leading blocks in any tier counted
     * by the best tier holding each; workers holding the first block nowhere are left out.
     */
    Map<String, WorkerMatch> matches(long[] chain) {
        Map<String, WorkerMatch> out = new HashMap<>();
        for (Map.Entry<String, Worker> e : workers.entrySet()) {
            Worker w = e.getValue();
            int device = 0;
            while (device < chain.length && w.blocks.contains(chain[device])) {
                device++;
            }
            int[] best = new int[3];
            int any = 0;
            for (; any < chain.length; any++) {
                int t = 0;
                while (t < 3 && !w.tiers.get(t).contains(chain[any])) {
                    t++;
                }
                if (t == 3) {
                    break;
                }
                best[t]++;
            }
            if (any > 0) {
                out.put(e.getKey(), new WorkerMatch(e.getKey(), device, best[0], best[1], best[2]));
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
                case STORED -> e.getStored().getBlocksList().forEach(x -> tier(w, e.getStored().getTier()).add(x.getSeqHash()));
                case REMOVED -> tier(w, e.getRemoved().getTier()).removeAll(e.getRemoved().getSeqHashesList());
                case CLEARED -> {
                    if (e.getCleared().getTier() == io.flotilla.protocol.v1.KvTier.KV_TIER_UNSPECIFIED) {
                        w.clearAll();
                    } else {
                        tier(w, e.getCleared().getTier()).clear();
                    }
                }
                default -> { }
            }
        }
        w.cursor = b.getSeq();
        applied++;
    }

    private static Set<Long> tier(Worker w, io.flotilla.protocol.v1.KvTier t) {
        return switch (t) {
            case KV_TIER_HOST -> w.tiers.get(1);
            case KV_TIER_DISK -> w.tiers.get(2);
            default -> w.blocks;
        };
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
        w.clearAll();
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
        w.clearAll();
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
                w.clearAll();
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
