package io.flotilla.indexer.core;

/**
 * Counters since start (each read separately, so two of them may be from neighbouring instants).
 *
 * @param batchesApplied           KV event batches applied to the index (directly or from the buffer)
 * @param eventsApplied            KvEvent entries inside those batches
 * @param blockEventsApplied       block-level changes requested: stored blocks + removed hashes + clears
 * @param duplicates               batches dropped because {@code seq <= cursor} (or already buffered)
 * @param gaps                     times a batch arrived with {@code seq > cursor + 1}
 * @param staleBatches             batches dropped as from an older epoch or an expired worker
 * @param staleStatuses            WorkerStatus records dropped as older than what is known
 * @param staleSnapshots           snapshots dropped (worker gone, older epoch, or older than the cursor)
 * @param reconciliationsRequested {@link ReconcileRequest}s returned
 * @param reconciliationsApplied   snapshots that replaced a worker's set
 * @param driftDetected            load-report digests that disagreed with the index at the same seq
 * @param leaseExpiries            workers dropped because their lease ran out
 * @param stopped                  workers dropped because they published STOPPED
 * @param epochChanges             times a worker id moved to a new epoch
 * @param bufferOverflows          buffered batches discarded because the buffer was full
 */
public record ApplierStats(long batchesApplied, long eventsApplied, long blockEventsApplied, long duplicates,
                           long gaps, long staleBatches, long staleStatuses, long staleSnapshots,
                           long reconciliationsRequested, long reconciliationsApplied, long driftDetected,
                           long leaseExpiries, long stopped, long epochChanges, long bufferOverflows) {
}
