package io.flotilla.router.client;

import io.flotilla.router.core.KvOverlap;

import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;

/** Where a Route's KV overlap comes from: one indexer ({@link IndexerClient}) or every shard ({@link ShardedIndexer}). */
public interface KvMatches {

    /**
     * Hands {@code done} the matched leading blocks per worker, or empty when no answer came in time (the router then
     * prices every worker from its approximate index). {@code done} runs exactly once and must not block.
     */
    void findMatches(String model, int blockSize, long[] seqHashes, Consumer<Optional<Map<String, KvOverlap>>> done);
}
