package io.flotilla.gateway.flow;

/**
 * Which prompt prefixes this gateway sent recently, for the flow cost estimate: a direct-mapped
 * table of block hashes (lossy, bounded, lock-free; a race or a collision costs only a worse estimate).
 * "Not cached" is estimated as the prompt after its leading blocks whose chained hash the gateway sent
 * within the table's memory: such blocks were prefilled on some worker and, the router being
 * cache-aware, will likely be found there. The estimate ignores eviction on the workers.
 */
public final class PrefixMemory {

    private final long[] table;
    private final int mask;

    /** @param blocks table size, rounded up to a power of two (8 bytes each) */
    public PrefixMemory(int blocks) {
        int size = Integer.highestOneBit(Math.max(1024, blocks - 1)) << 1;
        this.table = new long[size];
        this.mask = size - 1;
    }

    /**
     * Estimated cost of a request: prompt tokens after its remembered leading blocks, plus
     * {@code expectedOutput}; then remembers the prompt's blocks.
     */
    public long cost(long[] seqHashes, int blockSize, int promptTokens, int expectedOutput) {
        int cachedBlocks = 0;
        while (cachedBlocks < seqHashes.length && table[slot(seqHashes[cachedBlocks])] == seqHashes[cachedBlocks]) {
            cachedBlocks++;
        }
        for (long h : seqHashes) {
            table[slot(h)] = h;
        }
        long cached = Math.min((long) cachedBlocks * blockSize, Math.max(0, promptTokens - 1));
        return promptTokens - cached + expectedOutput;
    }

    private int slot(long h) {
        return (int) (h ^ (h >>> 29)) & mask;
    }
}
