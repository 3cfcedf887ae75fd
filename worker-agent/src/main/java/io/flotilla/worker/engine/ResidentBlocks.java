package io.flotilla.worker.engine;

/**
 * A point-in-time view of an engine's resident KV blocks.
 *
 * @param position  the position of the last KV event batch whose effects are included (0: none)
 * @param seqHashes the sequence hashes of every resident block, in no particular order; owned by
 *                  the caller
 */
public record ResidentBlocks(long position, long[] seqHashes) {

    /** Number of resident blocks. */
    public int count() {
        return seqHashes.length;
    }

    /** XOR of the resident sequence hashes, the digest load reports carry. */
    public long xorDigest() {
        long x = 0;
        for (long h : seqHashes) {
            x ^= h;
        }
        return x;
    }
}
