package io.flotilla.indexer.core;

/**
 * Tunables of {@link KvEventApplier}.
 *
 * @param provisionalLeaseMs lease of a worker known only from its KV batches (no WorkerStatus yet),
 *                           counted from the batch ts; also used when a status carries lease_ms 0
 * @param maxBufferedBatches per unverified worker, batches kept while waiting for a snapshot; past
 *                           it the oldest are dropped (a snapshot usually covers them)
 * @param reconcileRetryMs   an unanswered reconciliation is asked for again after this long
 * @param expiredRetentionMs an expired worker's record (epoch memory, view) is forgotten after this long
 * @param retiredEpochs      how many replaced epochs per worker are remembered to drop their late batches
 */
public record ApplierSettings(long provisionalLeaseMs, int maxBufferedBatches, long reconcileRetryMs,
                              long expiredRetentionMs, int retiredEpochs) {

    public ApplierSettings {
        if (provisionalLeaseMs <= 0 || maxBufferedBatches <= 0 || reconcileRetryMs <= 0
                || expiredRetentionMs < 0 || retiredEpochs <= 0) {
            throw new IllegalArgumentException("invalid applier settings: lease " + provisionalLeaseMs + ", buffer "
                    + maxBufferedBatches + ", retry " + reconcileRetryMs + ", retention " + expiredRetentionMs
                    + ", retired " + retiredEpochs);
        }
    }

    /** 10 s provisional lease, 4096 buffered batches, 5 s retry, 10 min retention, 8 retired epochs. */
    public static ApplierSettings defaults() {
        return new ApplierSettings(10_000, 4096, 5_000, 600_000, 8);
    }
}
