package io.flotilla.bench.workload;

/**
 * Deterministic prompt tokens. The rule is part of the benchmark's contract: a trace replayed by any
 * version of this tool (or by another language following this text) sends the same token ids.
 *
 * <h2>Token stream of a seed</h2>
 * The stream seeded by a 64-bit {@code seed} is exactly the sequence of
 * {@code new java.util.SplittableRandom(seed).nextInt(vocab)} calls, spelled out here so that it does
 * not depend on the JDK:
 * <pre>
 * state = seed
 * next32():  state += 0x9E3779B97F4A7C15               (wrapping 64-bit add)
 *            z = state
 *            z = (z ^ (z >>> 33)) * 0x62A9D9ED799705F5
 *            return (int) (((z ^ (z >>> 28)) * 0xCB24D0A5C88C35B3) >>> 32)
 * token():   r = next32(); m = vocab - 1
 *            if vocab is a power of two: return r &amp; m
 *            u = r >>> 1
 *            loop: r = u % vocab; if u + m - r overflows int (is negative): u = next32() >>> 1, repeat
 *            return r
 * </pre>
 * {@code vocab} is 100000 unless {@code --vocab-size} says otherwise (every id is then in [0, vocab)).
 *
 * <h2>Mooncake traces</h2>
 * Hash id {@code h} expands to the first {@code trace_block_size} (default 512) tokens of the stream
 * seeded by {@code h}. A row's prompt is the concatenation of its ids' expansions, cut to
 * {@code input_length}. When {@code input_length} exceeds {@code ids × trace_block_size}, the rest is
 * taken from the stream seeded by {@code derive(TAG_TRACE_PAD, row)} (row = 0-based line number of
 * data rows). Equal ids give equal token blocks, so an id prefix shared by two rows is a token prefix
 * shared by their prompts.
 *
 * <h2>Other prompts</h2>
 * Every other prompt part is the stream of a derived seed {@code derive(tag, a, b, …)}:
 * {@code h = 0; for each p in (tag, a, b, …): h = mix64(h ^ p)} with the SplitMix64 finaliser
 * {@code mix64(z) = z ^= z >>> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >>> 27; z *= 0x94D049BB133111EB; z ^ (z >>> 31)}.
 * Tags: {@link #TAG_TRACE_PAD}, {@link #TAG_CSV_ROW} (parts: seed, row), {@link #TAG_GROUP_PREFIX}
 * (seed, group), {@link #TAG_GROUP_SUFFIX} (seed, group, index), {@link #TAG_SESSION_CONTEXT} (seed,
 * session), {@link #TAG_SESSION_USER} (seed, session, turn), {@link #TAG_SESSION_OUTPUT} (seed,
 * session, turn).
 */
public final class TokenExpander {

    public static final int DEFAULT_VOCAB = 100_000;
    public static final long TAG_TRACE_PAD = 1;
    public static final long TAG_CSV_ROW = 2;
    public static final long TAG_GROUP_PREFIX = 3;
    public static final long TAG_GROUP_SUFFIX = 4;
    public static final long TAG_SESSION_CONTEXT = 5;
    public static final long TAG_SESSION_USER = 6;
    public static final long TAG_SESSION_OUTPUT = 7;
    public static final long TAG_WARMUP = 8;

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;

    private final int vocab;

    public TokenExpander(int vocab) {
        if (vocab < 2) {
            throw new IllegalArgumentException("vocabulary must hold at least 2 token ids, got " + vocab);
        }
        this.vocab = vocab;
    }

    public TokenExpander() {
        this(DEFAULT_VOCAB);
    }

    public int vocab() {
        return vocab;
    }

    /** Writes the first {@code count} tokens of the stream seeded by {@code seed} into {@code dest[offset…]}. */
    public void fill(long seed, int[] dest, int offset, int count) {
        long state = seed;
        int m = vocab - 1;
        boolean powerOfTwo = (vocab & m) == 0;
        for (int i = 0; i < count; i++) {
            state += GOLDEN_GAMMA;
            int r = mix32(state);
            if (powerOfTwo) {
                r &= m;
            } else {
                int u = r >>> 1;
                while (u + m - (r = u % vocab) < 0) {
                    state += GOLDEN_GAMMA;
                    u = mix32(state) >>> 1;
                }
            }
            dest[offset + i] = r;
        }
    }

    /** The first {@code count} tokens of the stream seeded by {@code seed}. */
    public int[] tokens(long seed, int count) {
        int[] out = new int[count];
        fill(seed, out, 0, count);
        return out;
    }

    /**
     * A Mooncake row's prompt: each hash id expands to {@code blockTokens} tokens, concatenated and cut
     * to {@code inputLength}; a shortfall is filled from the stream of {@code derive(TAG_TRACE_PAD, row)}.
     */
    public int[] expandTrace(long[] hashIds, int blockTokens, int inputLength, long row) {
        int[] out = new int[inputLength];
        int at = 0;
        for (int i = 0; i < hashIds.length && at < inputLength; i++) {
            int n = Math.min(blockTokens, inputLength - at);
            fill(hashIds[i], out, at, n);
            at += n;
        }
        if (at < inputLength) {
            fill(derive(TAG_TRACE_PAD, row), out, at, inputLength - at);
        }
        return out;
    }

    /** Concatenation of two token arrays followed by a third; used to grow multi-turn context. */
    public static int[] concat(int[] a, int[] b, int[] c) {
        int[] out = new int[a.length + b.length + c.length];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        System.arraycopy(c, 0, out, a.length + b.length, c.length);
        return out;
    }

    /** Seed derived from a tag and parts: {@code h = 0; for p in (tag, parts…): h = mix64(h ^ p)}. */
    public static long derive(long tag, long... parts) {
        long h = mix64(tag);
        for (long p : parts) {
            h = mix64(h ^ p);
        }
        return h;
    }

    /** SplitMix64 finaliser (Stafford variant 13). */
    public static long mix64(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    private static int mix32(long z) {
        z = (z ^ (z >>> 33)) * 0x62A9D9ED799705F5L;
        return (int) (((z ^ (z >>> 28)) * 0xCB24D0A5C88C35B3L) >>> 32);
    }
}
