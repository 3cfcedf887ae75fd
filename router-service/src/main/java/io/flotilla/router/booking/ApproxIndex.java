package io.flotilla.router.booking;

import io.flotilla.router.core.RouterConfig;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import it.unimi.dsi.fastutil.longs.Long2ObjectOpenHashMap;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The router's own guess of what each worker has cached, built from its past decisions (and its
 * peers', through {@code SequenceChange.Added}): a routed prompt's blocks are assumed resident on the
 * worker that computed them for {@code ttl} after the last time they were routed there. Used instead of
 * the kv-indexer when that is slow or down (mode KV_APPROX).
 *
 * <p>Answers like the indexer's {@code FindMatches}: for each worker, the number of leading blocks of
 * the request's seq-hash chain it holds; workers with no leading match are absent.
 *
 * <p>Bounded: a ring of the last {@code maxEntries} (block, worker) records, oldest first, drives both
 * expiry and eviction; when the ring is full the oldest record goes (approximately least recently
 * routed first). Expired entries never count, whether or not {@link #expire} has removed them yet. A
 * guess may be wrong (the worker evicted the blocks); it is only used to price, never to claim KV.
 * All methods are serialised on this object; recording allocates nothing for blocks already known.
 */
public final class ApproxIndex {

    /**
     * Workers holding one block, with the expiry of each. Most blocks have one holder, kept inline; the others
     * get arrays only when a second one comes. One object per block: the index lives as long as its TTL, so
     * every object of it is copied by young collections until it is tenured (with a boxed {@code HashMap} and
     * two arrays a block cost five objects, and the router's young pauses on a loaded machine reached 200 ms).
     */
    private static final class Holders {
        int w0;
        long e0;
        int[] moreWorkers;
        long[] moreExpiries;
        int n;

        int worker(int i) {
            return i == 0 ? w0 : moreWorkers[i - 1];
        }

        long expiry(int i) {
            return i == 0 ? e0 : moreExpiries[i - 1];
        }

        int find(int worker) {
            for (int i = 0; i < n; i++) {
                if (worker(i) == worker) {
                    return i;
                }
            }
            return -1;
        }

        long expiryOf(int worker) {
            int i = find(worker);
            return i < 0 ? Long.MIN_VALUE : expiry(i);
        }

        /** Returns true when the worker is new here. */
        boolean put(int worker, long expiry) {
            int i = find(worker);
            if (i >= 0) {
                set(i, worker, expiry);
                return false;
            }
            if (n > 0 && (moreWorkers == null || n - 1 == moreWorkers.length)) {
                int size = moreWorkers == null ? 1 : moreWorkers.length * 2;
                moreWorkers = moreWorkers == null ? new int[size] : Arrays.copyOf(moreWorkers, size);
                moreExpiries = moreExpiries == null ? new long[size] : Arrays.copyOf(moreExpiries, size);
            }
            set(n++, worker, expiry);
            return true;
        }

        void removeAt(int i) {
            n--;
            set(i, worker(n), expiry(n));
        }

        private void set(int i, int worker, long expiry) {
            if (i == 0) {
                w0 = worker;
                e0 = expiry;
            } else {
                moreWorkers[i - 1] = worker;
                moreExpiries[i - 1] = expiry;
            }
        }
    }

    private final long ttlMillis;
    private final int maxEntries;
    /** fastutil's open-addressing map: the seq hash unboxed in the table, no entry object per block. */
    private final Long2ObjectOpenHashMap<Holders> byBlock = new Long2ObjectOpenHashMap<>();
    private final Map<String, Integer> workerIds = new HashMap<>();
    private final List<String> workerNames = new ArrayList<>();
    /** Ring of records in the order made: block, worker, expiry. Stale records (refreshed or forgotten) are skipped. */
    private long[] ringBlock = new long[1024];
    private int[] ringWorker = new int[1024];
    private long[] ringExpiry = new long[1024];
    private int head;
    private int count;
    private int live;

    public ApproxIndex(Duration ttl, int maxEntries) {
        if (ttl.isNegative() || ttl.isZero() || maxEntries <= 0) {
            throw new IllegalArgumentException("TTL and size bound must be positive");
        }
        this.ttlMillis = ttl.toMillis();
        this.maxEntries = maxEntries;
    }

    public static ApproxIndex of(RouterConfig.Approx config) {
        return new ApproxIndex(config.ttl(), config.maxEntries());
    }

    /** Records that {@code workerId} computed (or received) the blocks of {@code seqHashes} at {@code now}. */
    public synchronized void record(long[] seqHashes, String workerId, Instant now) {
        Objects.requireNonNull(workerId, "workerId");
        int worker = workerIds.computeIfAbsent(workerId, w -> {
            workerNames.add(w);
            return workerNames.size() - 1;
        });
        long expiry = now.toEpochMilli() + ttlMillis;
        for (long h : seqHashes) {
            if (count == maxEntries) {
                pop();
            }
            push(h, worker, expiry);
            Holders holders = byBlock.computeIfAbsent(h, x -> new Holders());
            if (holders.put(worker, expiry)) {
                live++;
            }
        }
    }

    /** Leading matched blocks per worker for the chain {@code seqHashes} at {@code now}. */
    public synchronized Map<String, Integer> overlaps(long[] seqHashes, Instant now) {
        Map<String, Integer> out = new HashMap<>();
        Holders first = seqHashes.length == 0 ? null : byBlock.get(seqHashes[0]);
        if (first == null) {
            return out;
        }
        long t = now.toEpochMilli();
        int[] matching = new int[first.n];
        int m = 0;
        for (int i = 0; i < first.n; i++) {
            if (first.expiry(i) > t) {
                matching[m++] = first.worker(i);
            }
        }
        int depth = 1;
        for (; depth < seqHashes.length && m > 0; depth++) {
            Holders h = byBlock.get(seqHashes[depth]);
            if (h == null) {
                break;
            }
            int kept = 0;
            for (int i = 0; i < m; i++) {
                if (h.expiryOf(matching[i]) > t) {
                    matching[kept++] = matching[i];
                } else {
                    out.put(workerNames.get(matching[i]), depth);
                }
            }
            m = kept;
        }
        for (int i = 0; i < m; i++) {
            out.put(workerNames.get(matching[i]), depth);
        }
        return out;
    }

    /** Removes entries expired at {@code now}; returns how many (block, worker) entries went. */
    public synchronized int expire(Instant now) {
        long t = now.toEpochMilli();
        int before = live;
        // records are in expiry order: the TTL is fixed and record() appends
        while (count > 0 && ringExpiry[head] <= t) {
            pop();
        }
        return before - live;
    }

    /** Drops everything recorded for a worker (it stopped, or restarted with a new epoch and an empty cache). */
    public synchronized void forgetWorker(String workerId) {
        Integer worker = workerIds.get(workerId);
        if (worker == null) {
            return;
        }
        byBlock.values().removeIf(h -> {
            int i = h.find(worker);
            if (i >= 0) {
                h.removeAt(i);
                live--;
            }
            return h.n == 0;
        }); // its ring records are stale now and are skipped when popped
    }

    /** Live (block, worker) entries, expired or not. */
    public synchronized int size() {
        return live;
    }

    private void push(long block, int worker, long expiry) {
        if (count == ringBlock.length) {
            grow();
        }
        int at = (head + count) % ringBlock.length;
        ringBlock[at] = block;
        ringWorker[at] = worker;
        ringExpiry[at] = expiry;
        count++;
    }

    /** Drops the oldest record, and its entry unless the entry was refreshed since. */
    private void pop() {
        long block = ringBlock[head];
        int worker = ringWorker[head];
        long expiry = ringExpiry[head];
        head = (head + 1) % ringBlock.length;
        count--;
        Holders h = byBlock.get(block);
        if (h == null) {
            return;
        }
        int i = h.find(worker);
        if (i >= 0 && h.expiry(i) == expiry) {
            h.removeAt(i);
            live--;
            if (h.n == 0) {
                byBlock.remove(block);
            }
        }
    }

    private void grow() {
        int size = (int) Math.min(maxEntries, (long) ringBlock.length * 2);
        long[] blocks = new long[size];
        int[] workers = new int[size];
        long[] expiries = new long[size];
        for (int i = 0; i < count; i++) {
            int from = (head + i) % ringBlock.length;
            blocks[i] = ringBlock[from];
            workers[i] = ringWorker[from];
            expiries[i] = ringExpiry[from];
        }
        ringBlock = blocks;
        ringWorker = workers;
        ringExpiry = expiries;
        head = 0;
    }
}
