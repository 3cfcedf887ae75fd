package io.flotilla.worker.engine;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * An engine that embeds: one vector per input, pooled by the model the way it was trained (last token, mean, …),
 * each of {@link #dimensions()} floats. Embedding shares the engine with generation but has no KV to reuse and no
 * output tokens; an engine whose embedding needs a separate model or context says so in its own javadoc.
 *
 * <p>Contract: {@code embed} validates every input before it starts; an input it can never embed (empty, token ids
 * outside the vocabulary, longer than the context) fails the whole call with {@link InvalidRequestException}, a
 * draining or closed engine with {@link EngineUnavailableException}. Vectors come back in the inputs' order.
 */
public interface EmbeddingSupport extends EngineFeature {

    /** Length of a full vector. */
    int dimensions();

    /**
     * Whether a prefix of a vector is itself an embedding (Matryoshka training): then {@code embed} honours a
     * shorter {@code dimensions} by truncating and renormalising. Otherwise only the full length is served.
     */
    boolean truncatable();

    /**
     * @param requestId  the request's id (engine logs, {@code X-Request-Id})
     * @param inputs     token ids of each input (at least one input)
     * @param dimensions length of the vectors wanted, 0 for {@link #dimensions()}; other lengths only when
     *                   {@link #truncatable()}, else {@link InvalidRequestException}
     */
    CompletableFuture<List<float[]>> embed(String requestId, List<int[]> inputs, int dimensions);

    /** Why {@code dimensions} cannot be served by {@code support}, or null when it can. */
    static String refusedDimensions(EmbeddingSupport support, int dimensions) {
        if (dimensions == 0 || dimensions == support.dimensions()) {
            return null;
        }
        if (!support.truncatable()) {
            return "dimensions " + dimensions + ": this model's embeddings have " + support.dimensions()
                    + " dimensions and cannot be shortened (it is not trained for truncation)";
        }
        if (dimensions < 1 || dimensions > support.dimensions()) {
            return "dimensions must be in [1, " + support.dimensions() + "], got " + dimensions;
        }
        return null;
    }

    /** The first {@code dimensions} values of {@code vector}, scaled to unit L2 length (zero stays zero). */
    static float[] truncated(float[] vector, int dimensions) {
        int d = dimensions == 0 ? vector.length : Math.min(dimensions, vector.length);
        double norm = 0;
        for (int i = 0; i < d; i++) {
            norm += (double) vector[i] * vector[i];
        }
        norm = Math.sqrt(norm);
        float[] out = new float[d];
        for (int i = 0; i < d; i++) {
            out[i] = norm == 0 ? 0f : (float) (vector[i] / norm);
        }
        return out;
    }
}
