package io.flotilla.indexer.core;

/**
 * One worker inside an {@link IndexSnapshot}.
 *
 * @param workerId  the worker
 * @param epoch     the epoch the set belongs to
 * @param lastSeq   the cursor: last batch seq included in the set
 * @param lastTs    newest worker-clock ts seen for the epoch (orders a later unknown epoch against it)
 * @param verified  false when the worker was unverified at export: it is reconciled again after import
 * @param seqHashes the seq hashes the worker held on the device (the arrays are shared, not copied)
 * @param hostSeqHashes those it held in host memory
 * @param diskSeqHashes those it held on disk
 */
public record WorkerSnapshot(String workerId, long epoch, long lastSeq, long lastTs, boolean verified,
                             long[] seqHashes, long[] hostSeqHashes, long[] diskSeqHashes) {

    private static final long[] NONE = new long[0];

    public WorkerSnapshot {
        hostSeqHashes = hostSeqHashes == null ? NONE : hostSeqHashes;
        diskSeqHashes = diskSeqHashes == null ? NONE : diskSeqHashes;
    }

    /** A worker holding device blocks only. */
    public WorkerSnapshot(String workerId, long epoch, long lastSeq, long lastTs, boolean verified, long[] seqHashes) {
        this(workerId, epoch, lastSeq, lastTs, verified, seqHashes, NONE, NONE);
    }

    /** Tier {@code t} (0 device, 1 host, 2 disk). */
    long[] tier(int t) {
        return t == Tiers.HOST ? hostSeqHashes : t == Tiers.DISK ? diskSeqHashes : seqHashes;
    }
}
