package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EngineRequest;

import java.nio.charset.StandardCharsets;

/**
 * Deterministic "sampling": the k-th generated token of a request is a pure function of its stream
 * seed and k, so preemption, recompute, batching and timing never change a request's output.
 *
 * <pre>
 * base        = request seed                          when the request has one
 *             = FNV-1a-64(prompt token ids, le32)    when temperature == 0 (greedy depends on the prompt only)
 *             = FNV-1a-64(utf8(request id))          otherwise
 * stream_seed = mix(engine seed XOR mix(base))
 * token_k     = mix(stream_seed + (k + 1)·0x9E3779B97F4A7C15) mod vocab (unsigned)
 * </pre>
 */
public final class TokenSampler {

    private static final long GOLDEN = 0x9E3779B97F4A7C15L;

    private TokenSampler() {
    }

    /** The stream seed of {@code request} on an engine configured with {@code engineSeed}. */
    public static long streamSeed(EngineRequest request, long engineSeed) {
        long base;
        if (request.seed() != null) {
            base = request.seed();
        } else if (request.temperature() == 0) {
            base = fnv(request.promptTokens());
        } else {
            base = fnv(request.requestId().getBytes(StandardCharsets.UTF_8));
        }
        return KvPattern.mix(engineSeed ^ KvPattern.mix(base));
    }

    /** The {@code index}-th generated token (0-based) of stream {@code streamSeed}. */
    public static int tokenAt(long streamSeed, int index, int vocabSize) {
        long z = KvPattern.mix(streamSeed + (index + 1L) * GOLDEN);
        return (int) Long.remainderUnsigned(z, vocabSize);
    }

    private static long fnv(int[] tokens) {
        long h = 0xcbf29ce484222325L;
        for (int t : tokens) {
            for (int shift = 0; shift < 32; shift += 8) {
                h ^= (t >>> shift) & 0xff;
                h *= 0x100000001b3L;
            }
        }
        return h;
    }

    private static long fnv(byte[] bytes) {
        long h = 0xcbf29ce484222325L;
        for (byte b : bytes) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }
}
