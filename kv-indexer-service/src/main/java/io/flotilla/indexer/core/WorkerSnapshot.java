package io.flotilla.indexer.core;

/**
 * One worker inside an {@link IndexSnapshot}.
 *
 * @param workerId  the worker
 * @param epoch     the epoch the set belongs to
 * @param lastSeq   the cursor: last batch seq included in the set
 * @param lastTs    newest worker-clock ts seen for the epoch (orders a later unknown epoch against it)
 * @param verified  false when the worker was unverified at export: it is reconciled again after import
 * @param seqHashes the seq hashes the worker held (the array is shared, not copied)
 */
public record WorkerSnapshot(String workerId, long epoch, long lastSeq, long lastTs, boolean verified,
                             long[] seqHashes) {
}
