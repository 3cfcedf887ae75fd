package io.flotilla.indexer.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The applier's per-worker bookkeeping: records, leases (with freezing while the membership feed is
 * unhealthy), epoch moves, drops, and the counters. Writer thread only, except {@link #get},
 * {@link #all} and the counters, which readers may call.
 *
 * <p>Lease invariant: while the feed is healthy, after any call that takes {@code nowMs}, no current
 * worker has {@code leaseDeadlineMs < nowMs} (it was expired and its blocks dropped first).
 */
final class WorkerBook {

    final PrefixIndex index;
    final ApplierSettings settings;
    final ApplierCounters counters = new ApplierCounters();
    private final Map<String, WorkerRecord> records = new ConcurrentHashMap<>();
    /** A lower bound of the current workers' deadlines; expiry scans only once it has passed. */
    private long earliestDeadline = Long.MAX_VALUE;
    private boolean feedHealthy = true;
    private long feedUnhealthySinceMs;
    volatile long lastAppliedAtMs = Long.MIN_VALUE;

    WorkerBook(PrefixIndex index, ApplierSettings settings) {
        this.index = index;
        this.settings = settings;
    }

    WorkerRecord get(String workerId) {
        return records.get(workerId);
    }

    Collection<WorkerRecord> all() {
        return records.values();
    }

    boolean isEmpty() {
        return records.isEmpty();
    }

    /** Creates the record, or moves an existing one to {@code epoch}, dropping everything older. */
    WorkerRecord adopt(WorkerRecord r, String workerId, long epoch) {
        if (r == null) {
            r = new WorkerRecord(workerId, epoch, settings.retiredEpochs());
            records.put(workerId, r);
            return r;
        }
        drop(List.of(r));
        r.startEpoch(epoch);
        counters.epochChanges++;
        return r;
    }

    /** The worker published STOPPED: blocks dropped, epoch retired, record kept as EXPIRED. */
    void stop(WorkerRecord r, long nowMs) {
        drop(List.of(r));
        r.retire(r.epoch);
        markExpired(r, nowMs);
        counters.stopped++;
    }

    ReconcileRequest requestReconcile(WorkerRecord r, ReconcileRequest.Reason reason, long nowMs) {
        r.state = WorkerState.UNVERIFIED;
        r.reconcileRequestedAtMs = nowMs;
        counters.reconciliationsRequested++;
        return new ReconcileRequest(r.id, r.epoch, r.cursor, reason);
    }

    /** The worker's index slot, assigned on first use. */
    int slotOf(WorkerRecord r) {
        int s = r.slot;
        if (s < 0) {
            s = index.acquireSlot(r.id);
            r.slot = s;
        }
        return s;
    }

    /** Records what the worker's status says about it: model, block size, endpoint. */
    void describe(WorkerRecord r, io.flotilla.protocol.v1.WorkerStatus s) {
        r.model = s.getModel();
        r.blockSize = s.getBlockSize();
        r.endpoint = s.getEndpoint();
    }

    /** False only when the worker's last status names another model or another block size. Any thread. */
    boolean serves(String workerId, String model, int blockSize) {
        WorkerRecord r = records.get(workerId);
        if (r == null) {
            return true;
        }
        return !((blockSize > 0 && r.blockSize > 0 && r.blockSize != blockSize)
                || (!model.isEmpty() && !r.model.isEmpty() && !r.model.equals(model)));
    }

    String endpointOf(String workerId) {
        WorkerRecord r = records.get(workerId);
        return r == null ? null : r.endpoint;
    }

    // ------------------------------------------------------------------ leases

    /**
     * The deadline of a lease of {@code leaseMs} granted by a record received at {@code receivedAtMs}, on
     * the indexer's clock. The worker's own timestamp plays no part: clocks of other hosts are not
     * comparable with this one (a worker 3 s behind would expire on every heartbeat, one ahead never).
     */
    long leaseFrom(long receivedAtMs, long leaseMs) {
        long deadline = receivedAtMs + leaseMs;
        return deadline < receivedAtMs ? Long.MAX_VALUE : deadline;
    }

    void setDeadline(WorkerRecord r, long deadlineMs) {
        r.leaseDeadlineMs = deadlineMs;
        earliestDeadline = Math.min(earliestDeadline, deadlineMs);
    }

    boolean feedHealthy() {
        return feedHealthy;
    }

    void feedUnhealthy(long sinceMs) {
        feedUnhealthySinceMs = feedHealthy ? sinceMs : Math.min(feedUnhealthySinceMs, sinceMs);
        feedHealthy = false;
    }

    /** Leases were frozen since the outage began: each current deadline moves by its length. */
    void feedHealthyAgain(long nowMs) {
        if (feedHealthy) {
            return;
        }
        long outage = Math.max(0, nowMs - feedUnhealthySinceMs);
        feedHealthy = true;
        earliestDeadline = Long.MAX_VALUE;
        for (WorkerRecord r : records.values()) {
            if (r.isCurrent()) {
                long shifted = r.leaseDeadlineMs + outage;
                setDeadline(r, shifted < r.leaseDeadlineMs ? Long.MAX_VALUE : shifted);
            }
        }
    }

    /** Expires every current worker whose deadline passed (only while the feed is healthy). */
    List<String> expireDue(long nowMs) {
        if (!feedHealthy || nowMs <= earliestDeadline) {
            return List.of();
        }
        List<WorkerRecord> due = new ArrayList<>();
        long next = Long.MAX_VALUE;
        for (WorkerRecord r : records.values()) {
            if (r.isCurrent()) {
                if (nowMs > r.leaseDeadlineMs) {
                    due.add(r);
                } else {
                    next = Math.min(next, r.leaseDeadlineMs);
                }
            }
        }
        earliestDeadline = next;
        if (due.isEmpty()) {
            return List.of();
        }
        drop(due);
        List<String> ids = new ArrayList<>(due.size());
        for (WorkerRecord r : due) {
            markExpired(r, nowMs);
            counters.leaseExpiries++;
            ids.add(r.id);
        }
        return ids;
    }

    /** Forgets workers expired longer than the retention (their epoch memory goes with them). */
    void purgeExpired(long nowMs) {
        records.values().removeIf(r -> !r.isCurrent() && nowMs - r.expiredAtMs > settings.expiredRetentionMs());
    }

    private void markExpired(WorkerRecord r, long nowMs) {
        r.state = WorkerState.EXPIRED;
        r.expiredAtMs = nowMs;
        r.buffered.clear();
    }

    /** Drops the workers' blocks with one scan per group; their slots are released. */
    private void drop(Collection<WorkerRecord> workers) {
        int[] slots = workers.stream().mapToInt(r -> r.slot).filter(s -> s >= 0).toArray();
        if (slots.length > 0) {
            index.dropSlots(slots);
        }
        for (WorkerRecord r : workers) {
            r.slot = -1;
        }
    }
}
