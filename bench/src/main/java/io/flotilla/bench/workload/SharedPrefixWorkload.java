package io.flotilla.bench.workload;

import java.util.SplittableRandom;

/**
 * {@code groups × promptsPerGroup} prompts; every prompt of group g starts with the same
 * {@code prefixLen} tokens (stream of {@code derive(TAG_GROUP_PREFIX, seed, g)}) followed by
 * {@code suffixLen} tokens of its own ({@code derive(TAG_GROUP_SUFFIX, seed, g, i)}). Prompts are sent in
 * a seeded random order (Fisher–Yates with {@code SplittableRandom(seed)}) so groups interleave, at
 * the times of the given arrival process.
 */
public final class SharedPrefixWorkload implements Workload {

    private final TokenExpander expander;
    private final int[] order;
    private final int promptsPerGroup;
    private final int prefixLen;
    private final int suffixLen;
    private final int outputLen;
    private final long seed;
    private final ArrivalProcess arrivals;
    private int sent;

    public SharedPrefixWorkload(TokenExpander expander, int groups, int promptsPerGroup, int prefixLen, int suffixLen,
                                int outputLen, ArrivalProcess arrivals, long seed) {
        if (groups < 1 || promptsPerGroup < 1 || prefixLen < 0 || suffixLen < 0 || prefixLen + suffixLen < 1) {
            throw new IllegalArgumentException("shared-prefix workload needs --groups >= 1, --prompts-per-group >= 1 "
                    + "and a prompt of at least one token (--prefix-len + --suffix-len)");
        }
        long total = (long) groups * promptsPerGroup;
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("too many prompts: " + total);
        }
        this.expander = expander;
        this.promptsPerGroup = promptsPerGroup;
        this.prefixLen = prefixLen;
        this.suffixLen = suffixLen;
        this.outputLen = outputLen;
        this.seed = seed;
        this.arrivals = arrivals;
        this.order = new int[(int) total];
        for (int i = 0; i < order.length; i++) {
            order[i] = i;
        }
        SplittableRandom random = new SplittableRandom(seed);
        for (int i = order.length - 1; i > 0; i--) {
            int j = random.nextInt(i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }

    @Override
    public PlannedRequest next() {
        if (sent >= order.length) {
            return null;
        }
        int k = order[sent++];
        int group = k / promptsPerGroup;
        int index = k % promptsPerGroup;
        Prompt prompt = Prompt.lazy(prefixLen + suffixLen, () -> {
            int[] t = new int[prefixLen + suffixLen];
            expander.fill(TokenExpander.derive(TokenExpander.TAG_GROUP_PREFIX, seed, group), t, 0, prefixLen);
            expander.fill(TokenExpander.derive(TokenExpander.TAG_GROUP_SUFFIX, seed, group, index), t, prefixLen, suffixLen);
            return t;
        });
        return PlannedRequest.single(arrivals.next(), prompt, outputLen);
    }

    @Override
    public String describe() {
        return "shared-prefix groups: " + (order.length / promptsPerGroup) + " × " + promptsPerGroup
                + " prompts, prefix " + prefixLen + " + suffix " + suffixLen + " tokens, output " + outputLen;
    }
}
