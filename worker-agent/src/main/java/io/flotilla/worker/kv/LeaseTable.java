package io.flotilla.worker.kv;

import io.flotilla.worker.engine.KvPin;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The transfer leases of one prefill worker. Invariant: a lease's pin is released exactly once, by
 * whichever comes first of {@link #release}, {@link #expire} (at or after its expiry on the injected
 * clock) and {@link #close}; after that the lease is gone from the table. Thread-safe.
 */
public final class LeaseTable implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseTable.class);

    private final String idPrefix;
    private final Clock clock;
    private final Duration ttl;
    private final Map<String, KvLease> leases = new ConcurrentHashMap<>();
    private final AtomicLong next = new AtomicLong();
    private final AtomicLong granted = new AtomicLong();
    private final AtomicLong released = new AtomicLong();
    private final AtomicLong expired = new AtomicLong();
    private volatile boolean closed;

    /** @param idPrefix makes ids unique across the worker's epochs (e.g. the epoch in hex) */
    public LeaseTable(String idPrefix, Clock clock, Duration ttl) {
        this.idPrefix = idPrefix;
        this.clock = clock;
        this.ttl = ttl;
    }

    /** Puts {@code pin} under a new lease that expires {@code ttl} from now. */
    public KvLease grant(String requestId, int blocks, KvPin pin) {
        if (closed) {
            pin.release();
            throw new IllegalStateException("the lease table is closed");
        }
        KvLease lease = new KvLease(idPrefix + "-" + next.incrementAndGet(), requestId,
                clock.millis() + ttl.toMillis(), blocks, pin);
        leases.put(lease.id(), lease);
        granted.incrementAndGet();
        if (closed && leases.remove(lease.id()) != null) { // lost a race with close
            pin.release();
        }
        return lease;
    }

    /** Releases lease {@code id} now; false when no such lease is held (released, expired, unknown). */
    public boolean release(String id) {
        KvLease lease = leases.remove(id);
        if (lease == null) {
            return false;
        }
        lease.pin().release();
        released.incrementAndGet();
        return true;
    }

    /** Releases every lease whose expiry has passed; returns how many. */
    public int expire() {
        long now = clock.millis();
        List<KvLease> due = new ArrayList<>();
        leases.values().forEach(l -> {
            if (l.expiresAtMs() <= now) {
                due.add(l);
            }
        });
        int n = 0;
        for (KvLease l : due) {
            if (leases.remove(l.id(), l)) {
                l.pin().release();
                expired.incrementAndGet();
                n++;
                log.info("KV lease {} of request {} expired unreleased; {} blocks unpinned", l.id(), l.requestId(), l.blocks());
            }
        }
        return n;
    }

    public int active() {
        return leases.size();
    }

    public long grantedTotal() {
        return granted.get();
    }

    public long releasedTotal() {
        return released.get();
    }

    public long expiredTotal() {
        return expired.get();
    }

    /** Releases every lease and refuses new ones. */
    @Override
    public void close() {
        closed = true;
        for (String id : List.copyOf(leases.keySet())) {
            KvLease l = leases.remove(id);
            if (l != null) {
                l.pin().release();
            }
        }
    }
}
