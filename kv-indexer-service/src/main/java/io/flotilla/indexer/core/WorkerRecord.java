package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvEventBatch;

import java.util.TreeMap;

/**
 * The applier's state for one worker id. Mutated by the writer thread only; the fields a
 * {@link WorkerView} is built from are volatile so readers see each one whole.
 *
 * <p>The epoch cursor: {@code cursor} is the last seq applied in {@code epoch} (0 before any; the
 * first batch of an epoch has seq 1). Seq values are below 2^63.
 */
final class WorkerRecord {

    final String id;
    volatile long epoch;
    volatile long cursor;
    volatile WorkerState state;
    volatile long leaseDeadlineMs;
    /** Slot in the index, or -1 while the worker has none. */
    volatile int slot = -1;
    /** From the last status (empty/0 until one arrives): the namespace the reads filter on, and where to ask for snapshots. */
    volatile String model = "";
    volatile int blockSize;
    volatile String endpoint;

    /** Newest worker-clock ts seen for the current epoch (status or batch); orders epochs. */
    long lastTs = Long.MIN_VALUE;
    /** Newest WorkerStatus ts of the current epoch; MIN_VALUE when none arrived yet. */
    long lastStatusTs = Long.MIN_VALUE;
    long expiredAtMs;
    long reconcileRequestedAtMs;
    /** Batches with seq above the cursor, kept while UNVERIFIED; keyed by seq. */
    final TreeMap<Long, KvEventBatch> buffered = new TreeMap<>();

    private final long[] retired;
    private int retiredCount;
    private int retiredNext;

    WorkerRecord(String id, long epoch, int retiredMemory) {
        this.id = id;
        this.epoch = epoch;
        this.state = WorkerState.LIVE;
        this.retired = new long[retiredMemory];
    }

    boolean isCurrent() {
        return state != WorkerState.EXPIRED;
    }

    /** True when {@code e} is one of the last replaced (or stopped) epochs of this worker id. */
    boolean isRetired(long e) {
        for (int i = 0; i < retiredCount; i++) {
            if (retired[i] == e) {
                return true;
            }
        }
        return false;
    }

    /** Remembers {@code e} as old; the oldest remembered epoch is forgotten when full. */
    void retire(long e) {
        if (isRetired(e)) {
            return;
        }
        retired[retiredNext] = e;
        retiredNext = (retiredNext + 1) % retired.length;
        retiredCount = Math.min(retiredCount + 1, retired.length);
    }

    /** Starts following epoch {@code e} from its beginning; the caller has dropped the old blocks. */
    void startEpoch(long e) {
        retire(epoch);
        epoch = e;
        cursor = 0;
        state = WorkerState.LIVE;
        lastTs = Long.MIN_VALUE;
        lastStatusTs = Long.MIN_VALUE;
        buffered.clear();
    }

    WorkerView view(PrefixIndex index) {
        int s = slot;
        return new WorkerView(id, state, epoch, cursor, s < 0 ? 0 : index.countAt(s), leaseDeadlineMs);
    }
}
