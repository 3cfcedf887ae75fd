package io.flotilla.planner.model;

/**
 * The default profile: the simulated engine's timing model evaluated on a grid, with its defaults
 * (8192 KV blocks × 16 tokens = 131072 KV tokens per worker, at most 256 running, 8192 tokens per step).
 * <pre>
 * prefill_ms(t) = 4.209989e-7·t² + 1.518344e-2·t + 16.50142          t = tokens computed in one step
 * decode_ms(u)  = max(1, −25.74·u² + 54.01·u + 5.74)                 u = fraction of KV blocks in use
 * (both divided by the engine's speedup)
 *
 * TTFT(isl, c): c requests of isl uncached tokens prefilled together. The engine packs prefill chunks
 *   into steps of at most B = 8192 tokens, so the W = c·isl tokens take ⌊W/B⌋ full steps and one
 *   remainder step:  TTFT = ⌊W/B⌋·prefill_ms(B) + prefill_ms(W mod B).  This is the latency of the
 *   last request of the round — a conservative stand-in for the p90 a profiler measures.
 * ITL(ctx, c):  c sequences of ctx tokens decoding together; a decode-only step emits one token per
 *   sequence:  u = min(1, c·⌈ctx/16⌉ / 8192),  ITL = decode_ms(u).
 * </pre>
 * Throughputs follow in {@link PerformanceModel}. For example a prefill replica peaks at about
 * 48 400 prompt tokens/s (full 8192-token steps of ~169 ms); at a TTFT target of 1000 ms it is sized
 * for ~98 % of that with 500-token prompts but ~80 % (≈ 38 800 tokens/s) with 16 000-token prompts,
 * whose own prefill takes 330 ms and whose queueing delay grows faster. A decode replica at 1500
 * tokens of context holds 87 sequences (KV-bound) at an ITL of ~31 ms, about 2 800 tokens/s.
 */
public final class SimulatedEngineProfile {

    public static final double PREFILL_A = 4.209989e-7;
    public static final double PREFILL_B = 1.518344e-2;
    public static final double PREFILL_C = 16.50142;
    public static final double DECODE_A = -25.74;
    public static final double DECODE_B = 54.01;
    public static final double DECODE_C = 5.74;
    public static final int TOTAL_BLOCKS = 8192;
    public static final int BLOCK_SIZE = 16;
    public static final int MAX_RUNNING = 256;
    public static final int MAX_BATCH_TOKENS = 8192;

    static final double[] ISL = {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
    static final double[] PREFILL_CONCURRENCY = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
    static final double[] CONTEXT = {128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
    static final double[] DECODE_CONCURRENCY = {1, 2, 4, 8, 16, 32, 64, 128, 256};

    private SimulatedEngineProfile() {
    }

    /** The profile at real time (speedup 1). */
    public static PerformanceProfile create() {
        return create(1.0);
    }

    /** The profile of simulated workers running {@code speedup} times faster than the timing model. */
    public static PerformanceProfile create(double speedup) {
        if (!(speedup > 0)) {
            throw new IllegalArgumentException("speedup must be positive, got " + speedup);
        }
        double[][] ttft = new double[ISL.length][PREFILL_CONCURRENCY.length];
        for (int i = 0; i < ISL.length; i++) {
            for (int j = 0; j < PREFILL_CONCURRENCY.length; j++) {
                ttft[i][j] = ttftMs((long) ISL[i], (long) PREFILL_CONCURRENCY[j]) / speedup;
            }
        }
        double[][] itl = new double[CONTEXT.length][DECODE_CONCURRENCY.length];
        for (int i = 0; i < CONTEXT.length; i++) {
            for (int j = 0; j < DECODE_CONCURRENCY.length; j++) {
                itl[i][j] = itlMs((long) CONTEXT[i], (long) DECODE_CONCURRENCY[j]) / speedup;
            }
        }
        return new PerformanceProfile(speedup == 1.0 ? "simulated-engine" : "simulated-engine x" + speedup,
                new Table2D(ISL, PREFILL_CONCURRENCY, ttft), new Table2D(CONTEXT, DECODE_CONCURRENCY, itl),
                (long) TOTAL_BLOCKS * BLOCK_SIZE, MAX_RUNNING);
    }

    public static double prefillMs(long tokens) {
        if (tokens <= 0) {
            return 0;
        }
        double t = tokens;
        return PREFILL_A * t * t + PREFILL_B * t + PREFILL_C;
    }

    public static double decodeMs(double kvUsage) {
        double u = Math.min(1, Math.max(0, kvUsage));
        return Math.max(1, DECODE_A * u * u + DECODE_B * u + DECODE_C);
    }

    /** TTFT of the last of {@code c} requests of {@code isl} tokens prefilled together (see class comment). */
    public static double ttftMs(long isl, long c) {
        long w = isl * c;
        return (w / MAX_BATCH_TOKENS) * prefillMs(MAX_BATCH_TOKENS) + prefillMs(w % MAX_BATCH_TOKENS);
    }

    /** ITL of {@code c} sequences of {@code context} tokens decoding together (see class comment). */
    public static double itlMs(long context, long c) {
        long blocks = (context + BLOCK_SIZE - 1) / BLOCK_SIZE;
        return decodeMs(Math.min(1.0, (double) c * blocks / TOTAL_BLOCKS));
    }
}
