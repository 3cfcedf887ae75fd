package io.flotilla.worker.engine;

/**
 * A point-in-time view of an engine's resident KV blocks, per tier.
 *
 * @param position  the position of the last KV event batch whose effects are included (0: none)
 * @param seqHashes the sequence hashes of every block resident on the device, in no particular order;
 *                  owned by the caller
 * @param hostSeqHashes blocks held in the host-memory tier (empty without one)
 * @param diskSeqHashes blocks held in the disk tier (empty without one)
 */
public record ResidentBlocks(long position, long[] seqHashes, long[] hostSeqHashes, long[] diskSeqHashes) {

    private static final long[] NONE = new long[0];

    public ResidentBlocks {
        hostSeqHashes = hostSeqHashes == null ? NONE : hostSeqHashes;
        diskSeqHashes = diskSeqHashes == null ? NONE : diskSeqHashes;
    }

    /** Device blocks only (an engine without lower tiers). */
    public ResidentBlocks(long position, long[] seqHashes) {
        this(position, seqHashes, NONE, NONE);
    }

    /** Number of blocks resident on the device. */
    public int count() {
        return seqHashes.length;
    }

    /** XOR of the device tier's sequence hashes, the digest load reports carry. */
    public long xorDigest() {
        return xor(seqHashes);
    }

    /** XOR of {@code hashes}: the digest of one tier. */
    public static long xor(long[] hashes) {
        long x = 0;
        for (long h : hashes) {
            x ^= h;
        }
        return x;
    }
}
