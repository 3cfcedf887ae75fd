package io.flotilla.bench.stats;

import io.flotilla.bench.workload.TokenExpander;
import io.flotilla.bench.workload.TraceRow;
import io.flotilla.bench.workload.TraceReader;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

class OracleHitRateTest {

    private static final TokenExpander EXPANDER = new TokenExpander();

    /** Prompt made of 16-token blocks, each block the stream of its id. */
    private static int[] blocks(long... ids) {
        int[] t = new int[ids.length * 16];
        for (int i = 0; i < ids.length; i++) {
            EXPANDER.fill(ids[i], t, i * 16, 16);
        }
        return t;
    }

    private static int[] cut(int[] t, int n) {
        return Arrays.copyOf(t, n);
    }

    @Test
    void handMadeTraceWithKnownAnswers() {
        OracleHitRate o = new OracleHitRate(16);

        assertThat(o.observe(blocks(1, 2, 3))).as("first sight").isZero();
        assertThat(o.observe(blocks(1, 2, 3))).as("same 48 tokens: the last token is never cached, so 2 blocks").isEqualTo(32);
        assertThat(o.observe(blocks(1, 2, 3, 4))).as("extends the prompt: 3 whole blocks").isEqualTo(48);
        assertThat(o.observe(cut(blocks(1, 9), 20))).as("shares the first block only").isEqualTo(16);
        assertThat(o.observe(blocks(7, 2, 3))).as("same later blocks behind another first block: chained, no hit").isZero();
        assertThat(o.observe(cut(blocks(1, 2), 17))).as("17 tokens: one block before the last token").isEqualTo(16);
        assertThat(o.observe(cut(blocks(1), 16))).as("16 tokens: the only block holds the last token").isZero();
        assertThat(o.observe(new int[0])).isZero();

        assertThat(o.promptTokens()).isEqualTo(48 + 48 + 64 + 20 + 48 + 17 + 16);
        assertThat(o.cachedTokens()).isEqualTo(32 + 48 + 16 + 16);
        assertThat(o.hitRate()).isEqualTo(112.0 / 261);
    }

    @Test
    void aPartialTrailingBlockIsNeverRemembered() {
        OracleHitRate o = new OracleHitRate(16);
        o.observe(cut(blocks(1, 2), 31));
        assertThat(o.observe(blocks(1, 2, 3))).as("block 2 of the first prompt was partial").isEqualTo(16);
    }

    /** The oracle under a differential test. */
    private interface Observer {
        int observe(int[] prompt);
    }

    /** Feeds random prompts built from few distinct blocks to a fresh observer and the reference; true when all agree. */
    private static boolean agreesWithReference(java.util.function.Supplier<Observer> factory, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        for (int round = 0; round < 20; round++) {
            Observer oracle = factory.get();
            Set<String> seenPrefixes = new HashSet<>();
            for (int r = 0; r < 60; r++) {
                int nBlocks = 1 + random.nextInt(6);
                long[] ids = new long[nBlocks];
                for (int i = 0; i < nBlocks; i++) {
                    ids[i] = random.nextInt(3);
                }
                int[] prompt = cut(blocks(ids), Math.max(1, nBlocks * 16 - random.nextInt(20)));
                if (oracle.observe(prompt) != naive(seenPrefixes, prompt, 16)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Reference: credit leading blocks whose exact token prefix was a full-block prefix of an earlier prompt. */
    private static int naive(Set<String> seen, int[] prompt, int bs) {
        int hit = 0;
        int eligible = (prompt.length - 1) / bs;
        while (hit < eligible && seen.contains(Arrays.toString(Arrays.copyOf(prompt, (hit + 1) * bs)))) {
            hit++;
        }
        for (int b = 1; b * bs <= prompt.length; b++) {
            seen.add(Arrays.toString(Arrays.copyOf(prompt, b * bs)));
        }
        return hit * bs;
    }

    @Test
    void agreesWithANaiveReferenceOnRandomPromptsFromFewBlocks() {
        assertThat(agreesWithReference(() -> new OracleHitRate(16)::observe, 2024)).isTrue();
        assertThat(agreesWithReference(() -> new OracleHitRate(16)::observe, 7)).isTrue();
    }

    @Test
    void theDifferentialTestCatchesAnOracleWithoutChainedHashes() {
        // Self-test: block contents compared without their prefix must be caught.
        java.util.function.Supplier<Observer> unchained = () -> {
            Set<String> seenBlocks = new HashSet<>();
            return prompt -> {
                int hit = 0;
                int eligible = (prompt.length - 1) / 16;
                while (hit < eligible && seenBlocks.contains(Arrays.toString(Arrays.copyOfRange(prompt, hit * 16, hit * 16 + 16)))) {
                    hit++;
                }
                for (int b = 0; b + 16 <= prompt.length; b += 16) {
                    seenBlocks.add(Arrays.toString(Arrays.copyOfRange(prompt, b, b + 16)));
                }
                return hit * 16;
            };
        };
        assertThat(agreesWithReference(unchained, 2024)).isFalse();
    }

    @Test
    void mooncakeSampleMatchesAnIndependentHashIdLevelComputation() {
        // 187 920 of 3 853 165 prompt tokens: computed outside this code base from the hash ids alone
        // (a 16-token block at token offset o of a row is keyed by (hash_ids[0..o/512], o mod 512)).
        Path shared = io.flotilla.bench.workload.TraceReaderTestAccess.sharedTrace();
        assumeThat(shared != null && Files.isRegularFile(shared))
                .as("shared workload ../shared/workloads/mooncake-synthetic-300.jsonl not found beside the repository root")
                .isTrue();
        OracleHitRate o = new OracleHitRate(16);
        List<TraceRow> rows = new ArrayList<>();
        try (TraceReader r = TraceReader.open(shared, TraceReader.Format.AUTO, 1000)) {
            r.forEachRemaining(rows::add);
        }
        for (TraceRow row : rows) {
            o.observe(EXPANDER.expandTrace(row.hashIds(), 512, row.inputLength(), row.row()));
        }
        assertThat(o.promptTokens()).isEqualTo(3_853_165L);
        assertThat(o.cachedTokens()).isEqualTo(187_920L);
    }

    @Test
    void longHashSetAgreesWithHashSet() {
        LongHashSet set = new LongHashSet();
        Set<Long> ref = new HashSet<>();
        SplittableRandom random = new SplittableRandom(5);
        for (int i = 0; i < 50_000; i++) {
            long k = i % 7 == 0 ? random.nextLong(100) : random.nextLong();
            assertThat(set.add(k)).isEqualTo(ref.add(k));
        }
        assertThat(set.add(0)).isEqualTo(ref.add(0L));
        assertThat(set.size()).isEqualTo(ref.size());
        for (int i = 0; i < 1000; i++) {
            long k = random.nextLong(200) - 100;
            assertThat(set.contains(k)).isEqualTo(ref.contains(k));
        }
    }
}
