package io.flotilla.bench.stats;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The hit rate of one LRU cache of {@code capacityBlocks} blocks shared by the whole cluster: the
 * reference a tiered cache of the same total capacity is judged against (a perfect router in front of
 * one pool the size of every worker's device, host and disk tiers together).
 *
 * <p>Same crediting as {@link OracleHitRate}: a prompt is credited with its leading blocks present in
 * the cache, at most {@code ⌊(n − 1) / blockSize⌋}; then every full block of the prompt is touched,
 * last block first, so a prefix outlives its tails (the engines evict tails first too), and the least
 * recently touched blocks beyond the capacity are evicted. Not thread-safe.
 */
public final class LruHitRate {

    private final BlockHasher hasher;
    private final long capacityBlocks;
    private final LinkedHashMap<Long, Boolean> lru;
    private long promptTokens;
    private long cachedTokens;

    public LruHitRate(int blockSize, long capacityBlocks) {
        if (capacityBlocks < 1) {
            throw new IllegalArgumentException("an LRU needs a capacity of at least one block");
        }
        this.hasher = new BlockHasher(KvNamespace.of("flotilla-bench-oracle", "", "bs" + blockSize), blockSize);
        this.capacityBlocks = capacityBlocks;
        this.lru = new LinkedHashMap<>(1024, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<Long, Boolean> eldest) {
                return size() > LruHitRate.this.capacityBlocks;
            }
        };
    }

    /** Tokens of this prompt the LRU serves from cache; then touches the prompt's blocks. */
    public int observe(int[] tokens) {
        long[] seq = hasher.seqHashes(tokens);
        int eligible = tokens.length == 0 ? 0 : (tokens.length - 1) / hasher.blockSize();
        int hit = 0;
        while (hit < eligible && lru.containsKey(seq[hit])) {
            hit++;
        }
        for (int i = seq.length - 1; i >= 0; i--) {
            lru.put(seq[i], Boolean.TRUE);
        }
        int cached = hit * hasher.blockSize();
        promptTokens += tokens.length;
        cachedTokens += cached;
        return cached;
    }

    public long capacityBlocks() {
        return capacityBlocks;
    }

    public long promptTokens() {
        return promptTokens;
    }

    public long cachedTokens() {
        return cachedTokens;
    }

    public double hitRate() {
        return promptTokens == 0 ? Double.NaN : (double) cachedTokens / promptTokens;
    }
}
