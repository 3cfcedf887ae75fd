package io.flotilla.planner.observe;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Pool;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Membership of one model's workers from {@code flotilla.workers}, with leases. A worker is in the
 * fleet while {@code now < ts + lease_ms} of its latest status and it is not STOPPED. A status older
 * (by ts) than the one known is stale and ignored; a STOPPED epoch stays dead; a new epoch replaces
 * the worker.
 *
 * <p>Leases expire only while the feed is healthy: while it is not, {@link #fleet} evaluates leases
 * at the instant the feed went unhealthy, so a Kafka outage never empties the fleet (ARCHITECTURE
 * "Kafka topics"). Not thread-safe; the caller serialises access.
 */
public final class MembershipTable {

    /** A STOPPED worker stays as a tombstone until its lease would have ended, so late heartbeats of that epoch stay dead. */
    private record Entry(WorkerStatus status, long since, int running, boolean stopped) {
    }

    private final String model;
    private final Map<String, Entry> workers = new HashMap<>();

    public MembershipTable(String model) {
        this.model = model;
    }

    public void onStatus(WorkerStatus s) {
        if (!model.equals(s.getModel()) || Pool.of(s.getRole()).isEmpty()) {
            return;
        }
        Entry known = workers.get(s.getWorkerId());
        if (known != null && known.status.getTs() > s.getTs()) {
            return; // reordered heartbeat, or a late status of an earlier process
        }
        boolean sameEpoch = known != null && known.status.getEpoch() == s.getEpoch();
        if (sameEpoch && known.stopped) {
            return;
        }
        if (s.getState() == WorkerState.WORKER_STATE_STOPPED) {
            workers.put(s.getWorkerId(), new Entry(s, s.getTs(), 0, true));
            return;
        }
        workers.put(s.getWorkerId(), new Entry(s, sameEpoch ? known.since : s.getTs(), sameEpoch ? known.running : 0, false));
    }

    /** Records the running count of a worker's latest load report (used to pick drain victims). */
    public void onLoad(WorkerLoad load) {
        Entry e = workers.get(load.getWorkerId());
        if (e != null && !e.stopped && e.status.getEpoch() == load.getEpoch()) {
            workers.put(load.getWorkerId(), new Entry(e.status, e.since, load.getRunning(), false));
        }
    }

    /** The pool of a known worker. */
    public Optional<Pool> poolOf(String workerId) {
        Entry e = workers.get(workerId);
        return e == null || e.stopped ? Optional.empty() : Pool.of(e.status.getRole());
    }

    /**
     * Workers with a valid lease at {@code nowMs}, ordered by id.
     *
     * @param frozenAtMs when the membership feed is unhealthy, the instant it became so (leases are
     *                   judged then); -1 while it is healthy
     */
    public Fleet fleet(long nowMs, long frozenAtMs) {
        long at = frozenAtMs >= 0 ? Math.min(nowMs, frozenAtMs) : nowMs;
        List<FleetWorker> out = new ArrayList<>();
        for (Entry e : workers.values()) {
            WorkerStatus s = e.status;
            if (!e.stopped && at < s.getTs() + s.getLeaseMs()) {
                out.add(new FleetWorker(s.getWorkerId(), Pool.of(s.getRole()).orElseThrow(), s.getState(),
                        s.getEndpoint(), e.running, e.since));
            }
        }
        out.sort(Comparator.comparing(FleetWorker::id));
        return new Fleet(out);
    }

    /** Forgets workers whose lease ended more than {@code graceMs} before {@code nowMs}. */
    public void expire(long nowMs, long graceMs) {
        workers.values().removeIf(e -> e.status.getTs() + e.status.getLeaseMs() + graceMs < nowMs);
    }
}
