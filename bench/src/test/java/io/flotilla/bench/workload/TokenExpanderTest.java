package io.flotilla.bench.workload;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

class TokenExpanderTest {

    private final TokenExpander expander = new TokenExpander();

    @Test
    void theStreamOfASeedIsSplittableRandomNextIntOfTheVocabulary() {
        for (long seed : new long[] {0, 1, 2, 78, 7351, -1, Long.MIN_VALUE, 0x123456789ABCDEFL}) {
            SplittableRandom reference = new SplittableRandom(seed);
            int[] expected = new int[2048];
            for (int i = 0; i < expected.length; i++) {
                expected[i] = reference.nextInt(100_000);
            }
            assertThat(expander.tokens(seed, 2048)).as("seed %d", seed).containsExactly(expected);
        }
        TokenExpander pow2 = new TokenExpander(1 << 15);
        SplittableRandom reference = new SplittableRandom(99);
        for (int t : pow2.tokens(99, 256)) {
            assertThat(t).isEqualTo(reference.nextInt(1 << 15));
        }
    }

    @Test
    void goldenTokensNeverChange() {
        // Pinned once; a change here changes every replayed prompt and breaks comparability of results.
        assertThat(expander.tokens(0, 6)).containsExactly(GOLDEN_0);
        assertThat(expander.tokens(298, 6)).containsExactly(GOLDEN_298);
        assertThat(TokenExpander.derive(TokenExpander.TAG_CSV_ROW, 42, 0)).isEqualTo(GOLDEN_DERIVE);
    }

    static final int[] GOLDEN_0 = {57678, 9396, 81037, 18793, 17789, 31786};
    static final int[] GOLDEN_298 = {13062, 39710, 98, 32694, 38252, 70384};
    static final long GOLDEN_DERIVE = -2992142190854954201L;

    @Test
    void sameHashIdGivesSameTokensAndIdsInVocabulary() {
        int[] a = expander.expandTrace(new long[] {5, 6}, 512, 1024, 0);
        int[] b = expander.expandTrace(new long[] {5, 6}, 512, 1024, 99);
        assertThat(a).containsExactly(b);
        assertThat(Arrays.copyOfRange(a, 512, 1024)).containsExactly(expander.tokens(6, 512));
        assertThat(Arrays.stream(a).min().orElseThrow()).isGreaterThanOrEqualTo(0);
        assertThat(Arrays.stream(a).max().orElseThrow()).isLessThan(100_000);
    }

    @Test
    void aSharedIdPrefixIsASharedTokenPrefix() {
        int[] a = expander.expandTrace(new long[] {1, 2, 3}, 512, 1500, 0);
        int[] b = expander.expandTrace(new long[] {1, 2, 4}, 512, 1400, 1);

        assertThat(Arrays.copyOf(a, 1024)).containsExactly(Arrays.copyOf(b, 1024));
        assertThat(Arrays.copyOfRange(a, 1024, 1400)).isNotEqualTo(Arrays.copyOfRange(b, 1024, 1400));
        assertThat(a).hasSize(1500);
        assertThat(b).hasSize(1400);
    }

    @Test
    void promptsAreCutToInputLengthAndPaddedPerRowWhenIdsRunShort() {
        int[] cut = expander.expandTrace(new long[] {9, 10}, 512, 700, 0);
        assertThat(cut).hasSize(700);
        assertThat(Arrays.copyOfRange(cut, 512, 700)).containsExactly(expander.tokens(10, 188));

        int[] padded = expander.expandTrace(new long[] {9}, 512, 600, 3);
        int[] paddedOtherRow = expander.expandTrace(new long[] {9}, 512, 600, 4);
        assertThat(Arrays.copyOfRange(padded, 512, 600))
                .containsExactly(expander.tokens(TokenExpander.derive(TokenExpander.TAG_TRACE_PAD, 3), 88));
        assertThat(Arrays.copyOfRange(padded, 512, 600)).isNotEqualTo(Arrays.copyOfRange(paddedOtherRow, 512, 600));
    }

    @Test
    void smallerTraceBlocksExpandEachIdToThatManyTokens() {
        int[] t = expander.expandTrace(new long[] {1, 2}, 16, 32, 0);
        assertThat(Arrays.copyOf(t, 16)).containsExactly(expander.tokens(1, 16));
        assertThat(Arrays.copyOfRange(t, 16, 32)).containsExactly(expander.tokens(2, 16));
    }
}
