package io.flotilla.router.cluster;

import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.core.WorkerView;
import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.router.core.WorkersById;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The router's membership as a state: the latest status of each worker's current epoch, its latest load
 * report, its lease, whether the gateway reported it failing, and the Kubernetes view of worker pods. No
 * lock, no clock, no listener: every event takes the time, and what it changes in the routing views comes
 * out as {@link ViewChange}s, in order, for the driver ({@link WorkerDirectory}) to hand on. One driver
 * makes every call.
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
final class MembershipState {

    /** A worker's routing view changed: {@code view} is the new one, null when it left or cannot be routed to. */
    record ViewChange(String workerId, WorkerView view) {
    }


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
    private long feedUnhealthySinceMs = -1;
    /** The worker pods that exist; null while no Kubernetes view is kept. */
    private Set<String> pods;
    private long feedRecoveredAtMs = Long.MIN_VALUE;

    /**
     * Applies a membership record received at {@code nowMs}.
     *
     * @return true when a known process of this worker is gone (STOPPED, or replaced by a new epoch):
     *         whatever was booked on or cached by it must be forgotten
     */
    boolean onStatus(WorkerStatus status, long nowMs, List<ViewChange> out) {
        Entry e = workers.get(status.getWorkerId());
        if (status.getState() == WorkerState.WORKER_STATE_STOPPED) {
            if (e != null && e.status.getEpoch() == status.getEpoch()) {
                workers.remove(status.getWorkerId());
                gone(status.getWorkerId(), out);
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
            told(status.getWorkerId(), e, out);
        }
        return replaced;
    }

    /**
     * Applies a load report; reports of another epoch than the current one are ignored.
     *
     * @return true when the report was taken
     */
    boolean onLoad(WorkerLoad load, List<ViewChange> out) {
        Entry e = workers.get(load.getWorkerId());
        if (e != null && e.status.getEpoch() == load.getEpoch()) {
            e.load = load;
            told(load.getWorkerId(), e, out);
            return true;
        }
        return false;
    }

    /** The gateway (or the router itself) saw a call to this worker fail. */
    void markSuspect(String workerId, List<ViewChange> out) {
        markSuspect(workerId, -1, out);
    }

    /**
     * A connection to this worker's process {@code epoch} was lost: suspect, unless that process is no longer the
     * current one (a worker restarted on the same endpoint is not suspected for its predecessor). Epoch -1: any.
     */
    void markSuspect(String workerId, long epoch, List<ViewChange> out) {
        Entry e = workers.get(workerId);
        if (e != null && !e.suspect && (epoch == -1 || e.status.getEpoch() == epoch)) {
            e.suspect = true;
            told(workerId, e, out);
        }
    }

    /** A health probe answered: the worker takes requests again. */
    void clearSuspect(String workerId, List<ViewChange> out) {
        Entry e = workers.get(workerId);
        if (e != null && e.suspect) {
            e.suspect = false;
            told(workerId, e, out);
        }
    }

    Map<String, String> suspectEndpoints() {
        Map<String, String> out = new HashMap<>();
        workers.forEach((id, e) -> {
            if (e.suspect) {
                out.put(id, e.status.getEndpoint());
            }
        });
        return out;
    }

    /** A process of a worker the router may route to, and where it listens. */
    record Target(String workerId, long epoch, String endpoint) {
    }

    /** The workers routing may pick (a view, not suspect) that have an endpoint: those a watch keeps an eye on. */
    List<Target> routableTargets() {
        List<Target> out = new java.util.ArrayList<>();
        workers.forEach((id, e) -> {
            if (routable(e) && !e.status.getEndpoint().isBlank()) {
                out.add(new Target(id, e.status.getEpoch(), e.status.getEndpoint()));
            }
        });
        return out;
    }

    /** Workers routing may pick now: in membership, with a routing view, not suspect. */
    int routable() {
        int n = 0;
        for (Entry e : workers.values()) {
            if (routable(e)) {
                n++;
            }
        }
        return n;
    }

    /** Routing may pick it: it has a view (a block size, its pod there) and no failed call or lost connection. */
    private static boolean routable(Entry e) {
        return e.view != null && !e.suspect;
    }

    /** The membership feed's health as the Kafka shell last saw it. */
    void feedHealth(boolean healthy, long nowMs) {
        if (healthy && feedUnhealthySinceMs >= 0) {
            feedRecoveredAtMs = nowMs;
            feedUnhealthySinceMs = -1;
        } else if (!healthy && feedUnhealthySinceMs < 0) {
            feedUnhealthySinceMs = nowMs;
        }
    }

    boolean feedHealthy() {
        return feedUnhealthySinceMs < 0;
    }

    /**
     * Removes workers whose lease lapsed (only while the feed is healthy).
     *
     * @return the ids removed
     */
    Set<String> expire(long nowMs, List<ViewChange> out) {
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
        gone.forEach(id -> gone(id, out));
        return gone;
    }

    /**
     * Replaces the Kubernetes view with the names of the worker pods that exist now.
     *
     * @return the workers in membership that left routing because their pod is gone: whatever was booked on them
     *         must be forgotten
     */
    Set<String> podsPresent(Set<String> present, List<ViewChange> out) {
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
                told(id, e, out);
            }
        });
        return left;
    }

    /** Workers in membership (their lease running) whose pod is gone: out of routing. 0 without a Kubernetes view. */
    int withoutPod() {
        return pods == null ? 0 : (int) workers.keySet().stream().filter(id -> !pods.contains(id)).count();
    }

    /** Every known worker as the routing core sees it, sorted by id. */
    List<WorkerView> views() {
        return WorkersById.of(views);
    }

    /** The views as they are, unmodifiable and not copied: valid only within the step that reads them. */
    java.util.Collection<WorkerView> liveViews() {
        return java.util.Collections.unmodifiableCollection(views.values());
    }

    /** The worker's view, or null when it is unknown or has no block size. */
    WorkerView view(String workerId) {
        Entry e = workers.get(workerId);
        return e == null ? null : e.view;
    }

    /**
     * Rebuilds the entry's view and reports it when it differs from the view routing has now. A heartbeat (the
     * same status with a new ts) or a load report equal to the last one changes nothing a decision reads, and
     * reporting it anyway re-sorted the load ranking and rebuilt the capacity state a thousand times a second
     * at 1,024 workers.
     */
    private void told(String workerId, Entry e, List<ViewChange> out) {
        boolean podGone = pods != null && !pods.contains(workerId);
        e.view = e.status.getBlockSize() <= 0 || podGone ? null : ProtoMapping.workerView(e.status, e.load, !e.suspect);
        WorkerView before = e.view == null
                ? views.remove(workerId) // no pod, or a status without a block size (it cannot be compared with anything)
                : views.put(workerId, e.view);
        if (!java.util.Objects.equals(before, e.view)) {
            out.add(new ViewChange(workerId, e.view));
        }
    }

    private void gone(String workerId, List<ViewChange> out) {
        views.remove(workerId);
        out.add(new ViewChange(workerId, null));
    }

    WorkerStatus status(String workerId) {
        Entry e = workers.get(workerId);
        return e == null ? null : e.status;
    }

    /** The current epoch's last load report, or null. */
    WorkerLoad load(String workerId) {
        Entry e = workers.get(workerId);
        return e == null ? null : e.load;
    }

    int size() {
        return workers.size();
    }
}
