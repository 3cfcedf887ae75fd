package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EmbeddingSupport;
import io.flotilla.worker.engine.InvalidRequestException;

import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;

/**
 * The simulated engine's embeddings: deterministic vectors that behave like a bag-of-tokens model. Each token id
 * has a fixed pseudo-random direction (seeded by the id and the engine's seed); an input's vector is the sum of its
 * tokens' directions, scaled to unit length. Equal inputs give equal vectors on every engine with the same seed,
 * inputs that share tokens point in similar directions, and the order of the tokens does not matter. Every prefix of
 * a vector is itself such a vector, so the engine is {@link #truncatable()} (shortened vectors are renormalised).
 * Computed on the calling thread: a vector costs tokens × dimensions multiply-adds and no simulated time.
 *
 * @param dimensions   length of a full vector
 * @param vocabSize    token ids are in [0, vocabSize)
 * @param maxContext   the longest input in tokens
 * @param seed         the engine's seed
 */
record SimEmbeddings(int dimensions, int vocabSize, int maxContext, long seed) implements EmbeddingSupport {

    SimEmbeddings {
        if (dimensions < 1) {
            throw new IllegalArgumentException("embedding dimensions must be positive, got " + dimensions);
        }
    }

    @Override
    public boolean truncatable() {
        return true;
    }

    @Override
    public CompletableFuture<List<float[]>> embed(String requestId, List<int[]> inputs, int wanted) {
        try {
            String refused = EmbeddingSupport.refusedDimensions(this, wanted);
            if (refused != null) {
                throw new InvalidRequestException(refused);
            }
            for (int i = 0; i < inputs.size(); i++) {
                validate(i, inputs.get(i));
            }
            List<float[]> out = new ArrayList<>(inputs.size());
            for (int[] ids : inputs) {
                out.add(EmbeddingSupport.truncated(sum(ids), wanted));
            }
            return CompletableFuture.completedFuture(out);
        } catch (InvalidRequestException e) {
            return CompletableFuture.failedFuture(e);
        }
    }

    private void validate(int index, int[] ids) {
        if (ids.length == 0) {
            throw new InvalidRequestException("input " + index + " is empty");
        }
        if (ids.length > maxContext) {
            throw new InvalidRequestException("input " + index + " has " + ids.length + " tokens, more than the context of "
                    + maxContext);
        }
        for (int id : ids) {
            if (id < 0 || id >= vocabSize) {
                throw new InvalidRequestException("input " + index + ": token id " + Integer.toUnsignedString(id)
                        + " is outside the vocabulary [0, " + vocabSize + ")");
            }
        }
    }

    private float[] sum(int[] ids) {
        double[] acc = new double[dimensions];
        for (int id : ids) {
            SplittableRandom direction = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id);
            for (int d = 0; d < dimensions; d++) {
                acc[d] += direction.nextDouble(-1.0, 1.0);
            }
        }
        float[] v = new float[dimensions];
        for (int d = 0; d < dimensions; d++) {
            v[d] = (float) acc[d];
        }
        return v;
    }
}
