package io.flotilla.indexer.core;

/**
 * Counters of {@link KvEventApplier}. Written by the writer thread only (so {@code x++} on a
 * volatile loses nothing), read by anyone through {@link #snapshot()}.
 */
final class ApplierCounters {

    volatile long batchesApplied;
    volatile long eventsApplied;
    volatile long blockEventsApplied;
    volatile long duplicates;
    volatile long gaps;
    volatile long staleBatches;
    volatile long staleStatuses;
    volatile long staleSnapshots;
    volatile long reconciliationsRequested;
    volatile long reconciliationsApplied;
    volatile long driftDetected;
    volatile long leaseExpiries;
    volatile long stopped;
    volatile long epochChanges;
    volatile long bufferOverflows;

    ApplierStats snapshot() {
        return new ApplierStats(batchesApplied, eventsApplied, blockEventsApplied, duplicates, gaps, staleBatches,
                staleStatuses, staleSnapshots, reconciliationsRequested, reconciliationsApplied, driftDetected,
                leaseExpiries, stopped, epochChanges, bufferOverflows);
    }
}
