package io.flotilla.router.cluster;

import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.router.core.WorkerView;
import io.flotilla.router.core.WorkersById;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiConsumer;

/**
 * The router's membership view: the latest status of each worker's current epoch from
 * {@code flotilla.workers}, its latest load report, its lease, and whether the gateway reported it
 * failing. Pure: every method takes the time; the Kafka and gRPC shells feed it.
 *
 * <p>Rules (ARCHITECTURE "Kafka topics"): a status with a new epoch replaces the worker (and drops
 * its old load); a status or load of an older epoch is ignored; STOPPED removes the worker at once;
 * a worker whose lease lapsed leaves the candidates — but leases only run while the membership feed
 * is healthy: during an outage nobody expires, and after it every lease counts from the recovery,
 * so a Kafka outage never empties the worker set. A suspect worker (a failed gRPC call) takes no
 * new requests until it answers a health probe again.
 *
 * <p>On Kubernetes the worker pods are a second view of membership ({@link #podsPresent}; worker id = pod name):
 * once that view is known, a worker without a pod is out of routing whatever its lease says, and comes back
 * only when a pod of its name exists again. Without the view (outside Kubernetes) leases alone decide.
 */
public final class WorkerDirectory {

    private static final class Entry {
        WorkerStatus status;
        WorkerLoad load;
        long lastHeardMs;
        boolean suspect;
        /** The view of status, load and suspect flag; null when the status has no block size. */
        WorkerView view;
    }

    private final Map<String, Entry> workers = new HashMap<>();
    /** Every entry's view, by id: {@link #views} copies it rather than building and sorting views per call. */
    private final TreeMap<String, WorkerView> views = new TreeMap<>();
    /** Told every worker's new view (null: gone, or not routable at all) after each change to it. */
    private BiConsumer<String, WorkerView> viewChanged = (id, view) -> { };
    private long feedUnhealthySinceMs = -1;
    /** The worker pods that exist; null while no Kubernetes view is kept. */
    private Set<String> pods;
    private long feedRecoveredAtMs = Long.MIN_VALUE;

    /**
     * Registers the one listener told, under this directory's lock (so it must not block), each worker's
     * view after every change to it (membership, load report, suspect flag), or null when it left.
     */
    public synchronized void onViewChange(BiConsumer<String, WorkerView> listener) {
        viewChanged = java.util.Objects.requireNonNull(listener, "listener");
    }

    /**
     * Applies a membership record received at {@code nowMs}.
     *
     * @return true when a known process of this worker is gone (STOPPED, or replaced by a new epoch):
     *         whatever was booked on or cached by it must be forgotten
     */
    public synchronized boolean onStatus(WorkerStatus status, long nowMs) {
        Entry e = workers.get(status.getWorkerId());
        if (status.getState() == WorkerState.WORKER_STATE_STOPPED) {
            if (e != null && e.status.getEpoch() == status.getEpoch()) {
                workers.remove(status.getWorkerId());
                gone(status.getWorkerId());
                return true;
            }
            return false;
        }
        boolean replaced = false;
        if (e == null || e.status.getEpoch() != status.getEpoch()) {
            if (e != null && status.getTs() < e.status.getTs()) {
                return false; // a late record of an older process
            }
            replaced = e != null;
            e = new Entry();
            workers.put(status.getWorkerId(), e);
        }
        boolean changed = !status.equals(e.status);
        e.status = status;
        e.lastHeardMs = nowMs;
        if (changed) {
            told(status.getWorkerId(), e);
        }
        return replaced;
    }

    /**
     * Applies a load report; reports of another epoch than the current one are ignored.
     *
     * @return true when the report was taken
     */
    public synchronized boolean onLoad(WorkerLoad load) {
        Entry e = workers.get(load.getWorkerId());
        if (e != null && e.status.getEpoch() == load.getEpoch()) {
            e.load = load;
            told(load.getWorkerId(), e);
            return true;
        }
        return false;
    }

    /** The gateway (or the router itself) saw a call to this worker fail. */
    public synchronized void markSuspect(String workerId) {
        Entry e = workers.get(workerId);
        if (e != null && !e.suspect) {
            e.suspect = true;
            told(workerId, e);
        }
    }

    /** A health probe answered: the worker takes requests again. */
    public synchronized void clearSuspect(String workerId) {
        Entry e = workers.get(workerId);
        if (e != null && e.suspect) {
            e.suspect = false;
            told(workerId, e);
        }
    }

    public synchronized Map<String, String> suspectEndpoints() {
        Map<String, String> out = new HashMap<>();
        workers.forEach((id, e) -> {
            if (e.suspect) {
                out.put(id, e.status.getEndpoint());
            }
        });
        return out;
    }

    /** The membership feed's health as the Kafka shell last saw it. */
    public synchronized void feedHealth(boolean healthy, long nowMs) {
        if (healthy && feedUnhealthySinceMs >= 0) {
            feedRecoveredAtMs = nowMs;
            feedUnhealthySinceMs = -1;
        } else if (!healthy && feedUnhealthySinceMs < 0) {
            feedUnhealthySinceMs = nowMs;
        }
    }

    public synchronized boolean feedHealthy() {
        return feedUnhealthySinceMs < 0;
    }

    /**
     * Removes workers whose lease lapsed (only while the feed is healthy).
     *
     * @return the ids removed
     */
    public synchronized Set<String> expire(long nowMs) {
        if (feedUnhealthySinceMs >= 0) {
            return Set.of();
        }
        Set<String> gone = new java.util.HashSet<>();
        workers.entrySet().removeIf(en -> {
            Entry e = en.getValue();
            long heard = Math.max(e.lastHeardMs, feedRecoveredAtMs);
            boolean lapsed = nowMs - heard > e.status.getLeaseMs();
            if (lapsed) {
                gone.add(en.getKey());
            }
            return lapsed;
        });
        gone.forEach(this::gone);
        return gone;
    }

    /**
     * Replaces the Kubernetes view with the names of the worker pods that exist now.
     *
     * @return the workers in membership that left routing because their pod is gone: whatever was booked on them
     *         must be forgotten
     */
    public synchronized Set<String> podsPresent(Set<String> present) {
        Set<String> before = pods;
        pods = Set.copyOf(present);
        Set<String> left = new java.util.TreeSet<>();
        workers.forEach((id, e) -> {
            boolean had = before == null || before.contains(id);
            boolean has = pods.contains(id);
            if (had != has) {
                if (!has) {
                    left.add(id);
                }
                told(id, e);
            }
        });
        return left;
    }

    /** Workers in membership (their lease running) whose pod is gone: out of routing. 0 without a Kubernetes view. */
    public synchronized int withoutPod() {
        return pods == null ? 0 : (int) workers.keySet().stream().filter(id -> !pods.contains(id)).count();
    }

    /** Every known worker as the routing core sees it, sorted by id. */
    public synchronized List<WorkerView> views() {
        return WorkersById.of(views);
    }

    /** The worker's view, or null when it is unknown or has no block size. */
    public synchronized WorkerView view(String workerId) {
        Entry e = workers.get(workerId);
        return e == null ? null : e.view;
    }

    private void told(String workerId, Entry e) {
        boolean podGone = pods != null && !pods.contains(workerId);
        e.view = e.status.getBlockSize() <= 0 || podGone ? null : ProtoMapping.workerView(e.status, e.load, !e.suspect);
        if (e.view == null) {
            views.remove(workerId); // no pod, or a status without a block size (it cannot be compared with anything)
        } else {
            views.put(workerId, e.view);
        }
        viewChanged.accept(workerId, e.view);
    }

    private void gone(String workerId) {
        views.remove(workerId);
        viewChanged.accept(workerId, null);
    }

    public synchronized WorkerStatus status(String workerId) {
        Entry e = workers.get(workerId);
        return e == null ? null : e.status;
    }

    /** The current epoch's last load report, or null. */
    public synchronized WorkerLoad load(String workerId) {
        Entry e = workers.get(workerId);
        return e == null ? null : e.load;
    }

    public synchronized int size() {
        return workers.size();
    }
}
