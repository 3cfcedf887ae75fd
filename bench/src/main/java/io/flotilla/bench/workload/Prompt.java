package io.flotilla.bench.workload;

import java.util.function.Supplier;

/**
 * A prompt whose token ids are produced only when the request is sent, so a long trace never holds
 * more than the in-flight prompts in memory.
 */
public final class Prompt {

    private final int length;
    private final Supplier<int[]> tokens;

    private Prompt(int length, Supplier<int[]> tokens) {
        this.length = length;
        this.tokens = tokens;
    }

    /** A prompt expanded on demand; {@code tokens} must return exactly {@code length} ids, the same ones each call. */
    public static Prompt lazy(int length, Supplier<int[]> tokens) {
        return new Prompt(length, tokens);
    }

    /** A prompt already in memory (multi-turn context). */
    public static Prompt of(int[] tokens) {
        return new Prompt(tokens.length, () -> tokens);
    }

    public int length() {
        return length;
    }

    public int[] tokens() {
        return tokens.get();
    }
}
