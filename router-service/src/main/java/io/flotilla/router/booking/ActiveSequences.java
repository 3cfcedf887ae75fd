package io.flotilla.router.booking;

import io.flotilla.router.core.ActiveLoad;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * The requests this router (and the replicas it syncs with) sent to workers and has not seen
 * released, and the load they put on each worker.
 *
 * <p>Accounting, per worker w:
 * <pre>
 * prefillTokens(w)   = Σ newPrefillTokens of live requests whose prefill target is w and prefill is not done
 * prefillRequests(w) = how many such requests
 * decodeBlocks(w)    = Σ blocks of live requests whose (decode) worker is w
 * decodeRequests(w)  = how many such requests
 * </pre>
 *
 * <p>Contracts:
 * <ul>
 *   <li>Local changes ({@link #add}, {@link #markPrefillDone}, {@link #free}) apply at once and return
 *       the {@link SequenceChange} to publish; remote changes go through {@link #apply}, which ignores
 *       changes carrying this replica's router id (its own echoes).</li>
 *   <li>Every change is idempotent: re-adding an id replaces its booking (a migrated request moves);
 *       prefill-done and free of an unknown id change nothing.</li>
 *   <li>A freed id is remembered (tombstone) for {@code tombstoneTtl}, so an add that arrives after its
 *       free (the two were made on different replicas) does not resurrect it.</li>
 *   <li>A request not touched (added or prefill-done) for {@code ttl} is forgotten by {@link #expire}:
 *       a lost Release, or a replica that died, leaks load for at most {@code ttl}.</li>
 *   <li>Loads never go negative and always equal the sums above over the live requests.</li>
 * </ul>
 * Mutators are serialised on this object; {@link #loads()} is a lock-free read view whose values are
 * per-worker consistent.
 */
public final class ActiveSequences {

    private static final class Booking {
        final String workerId;
        final String prefillTarget;
        final int newPrefillTokens;
        final int blocks;
        boolean prefillDone;
        Instant touched;

        Booking(String workerId, String prefillTarget, int newPrefillTokens, int blocks, Instant touched) {
            this.workerId = workerId;
            this.prefillTarget = prefillTarget;
            this.newPrefillTokens = newPrefillTokens;
            this.blocks = blocks;
            this.touched = touched;
        }
    }

    private final String routerId;
    private final Duration ttl;
    private final Duration tombstoneTtl;
    /** Insertion order = touch order (a touch re-inserts), so expiry scans from the head. */
    private final LinkedHashMap<String, Booking> bookings = new LinkedHashMap<>();
    private final LinkedHashMap<String, Instant> tombstones = new LinkedHashMap<>();
    private final ConcurrentHashMap<String, ActiveLoad> loads = new ConcurrentHashMap<>();
    private final Map<String, ActiveLoad> loadsView = Collections.unmodifiableMap(loads);
    private final ConcurrentHashMap<String, ActiveLoad> atReport = new ConcurrentHashMap<>();
    private final Map<String, ActiveLoad> atReportView = Collections.unmodifiableMap(atReport);
    /** Told the id of every worker whose booked load or report baseline changed, under this object's lock. */
    private Consumer<String> changed = id -> { };

    /** Tombstones live for min(ttl, 1 minute): long enough to outlast sync reordering between replicas. */
    public ActiveSequences(String routerId, Duration ttl) {
        this(routerId, ttl, ttl.compareTo(Duration.ofMinutes(1)) < 0 ? ttl : Duration.ofMinutes(1));
    }

    public ActiveSequences(String routerId, Duration ttl, Duration tombstoneTtl) {
        this.routerId = Objects.requireNonNull(routerId, "routerId");
        this.ttl = Objects.requireNonNull(ttl, "ttl");
        this.tombstoneTtl = Objects.requireNonNull(tombstoneTtl, "tombstoneTtl");
    }

    /** Registers the one listener told (under this object's lock, so it must not block) about changed workers. */
    public synchronized void onChange(Consumer<String> listener) {
        changed = Objects.requireNonNull(listener, "listener");
    }

    public String routerId() {
        return routerId;
    }

    /** Books a request routed by this replica; returns the change to publish. */
    public synchronized SequenceChange.Added add(String requestId, String workerId, String prefillWorkerId,
                                                 int newPrefillTokens, int blocks, long[] seqHashes, Instant now) {
        SequenceChange.Added change = new SequenceChange.Added(routerId, requestId, now.toEpochMilli(), workerId,
                prefillWorkerId, newPrefillTokens, blocks, seqHashes);
        tombstones.remove(requestId); // a local add is authoritative: the id is live again
        put(change, now);
        return change;
    }

    /** The request's prefill finished; returns the change to publish (also for an unknown id). */
    public synchronized SequenceChange.PrefillDone markPrefillDone(String requestId, Instant now) {
        prefillDone(requestId, now);
        return new SequenceChange.PrefillDone(routerId, requestId, now.toEpochMilli());
    }

    /** The request ended; returns the change to publish (also for an unknown id: a peer may know it). */
    public synchronized SequenceChange.Freed free(String requestId, Instant now) {
        remove(requestId, now);
        return new SequenceChange.Freed(routerId, requestId, now.toEpochMilli());
    }

    /**
     * Applies a change another replica made. Returns whether anything changed: false for this
     * replica's own echoes, duplicates, unknown ids and adds of ids freed within the tombstone TTL.
     */
    public synchronized boolean apply(SequenceChange change, Instant now) {
        if (change.routerId().equals(routerId)) {
            return false;
        }
        if (change instanceof SequenceChange.Added a) {
            if (tombstones.containsKey(a.requestId())) {
                return false;
            }
            put(a, now);
            return true;
        }
        if (change instanceof SequenceChange.PrefillDone p) {
            return prefillDone(p.requestId(), now);
        }
        return remove(change.requestId(), now);
    }

    /** Forgets bookings untouched for the TTL and tombstones past theirs; returns bookings forgotten. */
    public synchronized int expire(Instant now) {
        int expired = 0;
        for (Iterator<Booking> it = bookings.values().iterator(); it.hasNext(); ) {
            Booking b = it.next();
            if (b.touched.plus(ttl).isAfter(now)) {
                break;
            }
            it.remove();
            count(b, -1);
            expired++;
        }
        for (Iterator<Instant> it = tombstones.values().iterator(); it.hasNext(); ) {
            if (it.next().plus(tombstoneTtl).isAfter(now)) {
                break;
            }
            it.remove();
        }
        return expired;
    }

    /** Live read-only view: worker id → booked load; workers with nothing booked are absent. */
    public Map<String, ActiveLoad> loads() {
        return loadsView;
    }

    /**
     * Remembers the worker's booked load as of now, when its load report arrives: {@link LoadMerge#DELTA}
     * adds only the bookings made (minus those finished) after this point to the report.
     *
     * @return true when the baseline moved (the listener is told only then: at fleet size most reports find
     *         the worker's bookings as they were at its last report)
     */
    public synchronized boolean reported(String workerId) {
        ActiveLoad now = loads.get(workerId);
        ActiveLoad before = now == null ? atReport.remove(workerId) : atReport.put(workerId, now);
        if (java.util.Objects.equals(before, now)) {
            return false;
        }
        changed.accept(workerId);
        return true;
    }

    /** Live read-only view: worker id → booked load when its last report arrived (absent = none). */
    public Map<String, ActiveLoad> loadsAtReport() {
        return atReportView;
    }

    /** The worker left the cluster: drop its report baseline (its bookings leave through release/TTL). */
    public synchronized void forgetWorker(String workerId) {
        atReport.remove(workerId);
        changed.accept(workerId);
    }

    /** The booked load on {@code workerId} when its last report arrived. */
    public ActiveLoad loadAtReport(String workerId) {
        return atReport.getOrDefault(workerId, ActiveLoad.NONE);
    }

    public ActiveLoad load(String workerId) {
        return loads.getOrDefault(workerId, ActiveLoad.NONE);
    }

    public synchronized int size() {
        return bookings.size();
    }

    public synchronized boolean contains(String requestId) {
        return bookings.containsKey(requestId);
    }

    private void put(SequenceChange.Added a, Instant now) {
        Booking old = bookings.remove(a.requestId());
        if (old != null) {
            count(old, -1);
        }
        Booking b = new Booking(a.workerId(), a.prefillTarget(), a.newPrefillTokens(), a.blocks(), now);
        bookings.put(a.requestId(), b);
        count(b, +1);
    }

    private boolean prefillDone(String requestId, Instant now) {
        Booking b = bookings.remove(requestId);
        if (b == null) {
            return false;
        }
        boolean changed = !b.prefillDone;
        if (changed) {
            count(b, -1);
            b.prefillDone = true;
            count(b, +1);
        }
        b.touched = now;
        bookings.put(requestId, b); // re-insert: touch order
        return changed;
    }

    private boolean remove(String requestId, Instant now) {
        tombstones.remove(requestId);
        tombstones.put(requestId, now);
        Booking b = bookings.remove(requestId);
        if (b == null) {
            return false;
        }
        count(b, -1);
        return true;
    }

    /** Adds (sign +1) or removes (-1) a booking's contribution to the per-worker loads. */
    private void count(Booking b, int sign) {
        ActiveLoad prefill = b.prefillDone ? ActiveLoad.NONE : new ActiveLoad(b.newPrefillTokens, 1, 0, 0);
        ActiveLoad decode = new ActiveLoad(0, 0, b.blocks, 1);
        if (b.prefillTarget.equals(b.workerId)) {
            adjust(b.workerId, decode.plus(prefill, 1), sign);
        } else {
            adjust(b.workerId, decode, sign);
            adjust(b.prefillTarget, prefill, sign);
        }
    }

    private void adjust(String workerId, ActiveLoad delta, int sign) {
        if (delta.isEmpty()) {
            return;
        }
        loads.compute(workerId, (id, cur) -> {
            ActiveLoad next = (cur == null ? ActiveLoad.NONE : cur).plus(delta, sign);
            return next.isEmpty() ? null : next;
        });
        changed.accept(workerId);
    }
}
