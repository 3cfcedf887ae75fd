package io.flotilla.gateway.generation;

import java.util.List;

/**
 * One embeddings request, resolved and tokenized: what its worker is asked for.
 *
 * @param blockSize  the model's block size (the router compares workers of one block size)
 * @param inputs     each input's token ids, in the request's order
 * @param dimensions the vector length the client asked for, 0 when it did not ask
 */
public record EmbeddingJob(String requestId, String model, String tenant, int blockSize, List<int[]> inputs, int dimensions) {

    public EmbeddingJob {
        inputs = List.copyOf(inputs);
    }

    /** Tokens of every input together: the request's cost and its {@code usage.prompt_tokens}. */
    public int promptTokens() {
        long n = 0;
        for (int[] ids : inputs) {
            n += ids.length;
        }
        return (int) Math.min(Integer.MAX_VALUE, n);
    }
}
