package io.flotilla.indexer.core;

/** What the index knows about one worker's blocks. */
public enum WorkerState {
    /** Every batch of the current epoch up to the cursor was applied in order: the set is exact as of that seq. */
    LIVE,
    /**
     * A gap, a digest mismatch, a revival or a restore made the set doubtful; a snapshot was asked for.
     * The worker's last known blocks keep being served for routing (a wrong guess costs a cache miss,
     * never wrong KV: a worker only reuses blocks it really has under the same seq_hash), and its
     * later batches are buffered until the snapshot arrives.
     */
    UNVERIFIED,
    /** Lease expired or the worker stopped: it holds nothing in the index and its batches are stale. */
    EXPIRED
}
