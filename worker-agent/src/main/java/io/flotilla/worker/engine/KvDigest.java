package io.flotilla.worker.engine;

/**
 * Count and XOR of an engine's resident seq hashes per tier, taken atomically with the KV event
 * position they correspond to: what load reports carry so an indexer can detect silent drift.
 */
public record KvDigest(long position, long deviceCount, long deviceXor, long hostCount, long hostXor,
                       long diskCount, long diskXor) {

    /** The digest of a snapshot (O(blocks); engines that keep the sums answer in O(1)). */
    public static KvDigest of(ResidentBlocks r) {
        return new KvDigest(r.position(), r.count(), r.xorDigest(), r.hostSeqHashes().length,
                ResidentBlocks.xor(r.hostSeqHashes()), r.diskSeqHashes().length, ResidentBlocks.xor(r.diskSeqHashes()));
    }
}
