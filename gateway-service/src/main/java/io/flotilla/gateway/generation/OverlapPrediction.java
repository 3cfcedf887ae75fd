package io.flotilla.gateway.generation;

import io.flotilla.protocol.v1.RoutingMode;

/**
 * What a KV-aware route predicted about one attempt: the router's {@code overlap_blocks} for the chosen
 * worker and the length of the context it was asked to route. {@link #judge} compares it with what the
 * worker then reported in {@code cached_tokens} (for engines without KV events, the engine's own count).
 *
 * <p>Predicted blocks are {@code min(overlap, ⌊(context − 1) / blockSize⌋)}: every engine evaluates at least
 * one prompt token, so a prompt wholly in cache cannot reuse its last block when that block ends the prompt.
 * Actual blocks are {@code ⌊cached / blockSize⌋}.
 *
 * @param overlapBlocks  the router's overlap for the worker it chose
 * @param contextTokens  tokens routed (the prompt, plus the output so far after a migration)
 */
public record OverlapPrediction(int overlapBlocks, int contextTokens) {

    /** How a prediction compared with the worker's count: {@code exact}, {@code over} or {@code under}. */
    public enum Result {
        EXACT, OVER, UNDER;

        public String tag() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** Whether a route of {@code mode} predicts an overlap at all (KV-aware routing, with or without the indexer). */
    public static boolean predicts(RoutingMode mode) {
        return mode == RoutingMode.ROUTING_MODE_KV || mode == RoutingMode.ROUTING_MODE_KV_APPROX;
    }

    public int predictedBlocks(int blockSize) {
        return Math.min(overlapBlocks, Math.max(0, (contextTokens - 1) / blockSize));
    }

    public Result judge(int cachedTokens, int blockSize) {
        if (blockSize <= 0) {
            throw new IllegalArgumentException("block size must be positive: " + blockSize);
        }
        int predicted = predictedBlocks(blockSize);
        int actual = Math.max(0, cachedTokens) / blockSize;
        return predicted == actual ? Result.EXACT : predicted > actual ? Result.OVER : Result.UNDER;
    }
}
