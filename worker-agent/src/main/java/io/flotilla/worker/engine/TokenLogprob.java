package io.flotilla.worker.engine;

/**
 * The log-probability of one generated token under the engine's distribution, and the most likely
 * alternatives at its position, most likely first (they may include the token itself). The arrays
 * belong to the receiver once handed over.
 */
public record TokenLogprob(float logprob, int[] topIds, float[] topLogprobs) {

    private static final int[] NO_IDS = new int[0];
    private static final float[] NO_LOGPROBS = new float[0];

    public TokenLogprob {
        topIds = topIds == null ? NO_IDS : topIds;
        topLogprobs = topLogprobs == null ? NO_LOGPROBS : topLogprobs;
        if (topIds.length != topLogprobs.length) {
            throw new IllegalArgumentException("top ids and logprobs differ in length");
        }
    }

    /** Only the token's own log-probability. */
    public static TokenLogprob of(float logprob) {
        return new TokenLogprob(logprob, NO_IDS, NO_LOGPROBS);
    }
}
