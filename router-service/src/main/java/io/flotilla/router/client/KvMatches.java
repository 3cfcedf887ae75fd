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
    default void findMatches(String model, int blockSize, long[] seqHashes, Consumer<Optional<Map<String, KvOverlap>>> done) {
        findMatches(model, blockSize, seqHashes, 0, done);
    }

    /**
     * As {@link #findMatches(String, int, long[], Consumer)} for a prompt whose prefill would take
     * {@code prefillNanos} (0 when unknown): a long prompt may wait longer for the answer
     * ({@link DeadlineEstimator#budgetNanos}).
     */
    void findMatches(String model, int blockSize, long[] seqHashes, long prefillNanos,
                     Consumer<Optional<Map<String, KvOverlap>>> done);
}
