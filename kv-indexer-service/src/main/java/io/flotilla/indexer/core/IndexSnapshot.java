package io.flotilla.indexer.core;

import java.util.List;

/**
 * The index content at one instant, for periodic index snapshots and fast restarts: per worker, the
 * epoch, the cursor and the seq hashes as a plain {@code long[]} (8 bytes a block). The shell stores
 * it with the Kafka offsets it corresponds to ({@link IndexSnapshotCodec} writes it compactly).
 *
 * @param takenAtMs index-clock time of the export
 * @param workers   one entry per live or unverified worker
 */
public record IndexSnapshot(long takenAtMs, List<WorkerSnapshot> workers) {

    public IndexSnapshot {
        workers = List.copyOf(workers);
    }

    /** Resident (block, worker) pairs in the snapshot, every tier counted. */
    public long blocks() {
        long n = 0;
        for (WorkerSnapshot w : workers) {
            n += w.seqHashes().length + w.hostSeqHashes().length + w.diskSeqHashes().length;
        }
        return n;
    }
}
