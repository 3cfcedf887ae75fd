package io.flotilla.bench.stats;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;

/**
 * The best prefix-cache hit rate any router could reach on a workload, with unlimited cache.
 *
 * <p>Prompts are observed in the order they are sent, as the token ids actually sent. Each prompt is
 * cut into blocks of the serving block size and identified by chained hashes ({@link BlockHasher}
 * seq hashes), so a block's identity covers its whole prefix. For a prompt of n tokens the oracle
 * credits the leading blocks whose seq hash appeared in any earlier prompt, but at most
 * {@code ⌊(n − 1) / blockSize⌋} blocks: an engine always computes at least the last prompt token
 * (it needs its logits), so the cached tokens it reports never include it, and caches whole blocks
 * only. Then every full block of the prompt is remembered. Oracle hit rate = credited tokens / prompt
 * tokens, over all sent requests.
 *
 * <p>Block identity here uses a fixed bench namespace; only equality matters, so the result does not
 * depend on the model. Not thread-safe: the load generator observes on its dispatcher thread.
 */
public final class OracleHitRate {

    private final BlockHasher hasher;
    private final LongHashSet seen = new LongHashSet();
    private long promptTokens;
    private long cachedTokens;

    public OracleHitRate(int blockSize) {
        this.hasher = new BlockHasher(KvNamespace.of("flotilla-bench-oracle", "", "bs" + blockSize), blockSize);
    }

    /** Tokens of this prompt the oracle serves from cache; then remembers the prompt's blocks. */
    public int observe(int[] tokens) {
        long[] seq = hasher.seqHashes(tokens);
        int eligible = tokens.length == 0 ? 0 : (tokens.length - 1) / hasher.blockSize();
        int hit = 0;
        while (hit < eligible && seen.contains(seq[hit])) {
            hit++;
        }
        for (long h : seq) {
            seen.add(h);
        }
        int cached = hit * hasher.blockSize();
        promptTokens += tokens.length;
        cachedTokens += cached;
        return cached;
    }

    public long promptTokens() {
        return promptTokens;
    }

    public long cachedTokens() {
        return cachedTokens;
    }

    /** Distinct blocks seen so far. */
    public int distinctBlocks() {
        return seen.size();
    }

    public double hitRate() {
        return promptTokens == 0 ? Double.NaN : (double) cachedTokens / promptTokens;
    }
}
