package io.flotilla.worker.engine.llamacpp;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.KvEvent;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The slots' caches as llama.cpp keeps them, and the KV events that describe them. */
class CacheMirrorTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "t", "f32/bs4/paged"), 4);

    private static int[] tokens(int... t) {
        return t;
    }

    @Test
    void reuseIsTheCommonPrefixLessOneWhenTheWholePromptMatches() {
        CacheMirror m = new CacheMirror(2, HASHER);
        m.hold(0, tokens(1, 2, 3, 4, 5, 6, 7, 8, 9));
        assertThat(m.reuse(0, tokens(1, 2, 3, 4, 5, 6, 7, 8, 9))).isEqualTo(8);
        assertThat(m.reuse(0, tokens(1, 2, 3, 9))).isEqualTo(3);
        assertThat(m.reuse(0, tokens(1, 2))).as("a prompt inside the cache").isEqualTo(1);
        assertThat(m.reuse(1, tokens(1, 2, 3))).isZero();
        assertThat(m.best(new int[] {1, 0}, tokens(1, 2, 3, 4, 5))).isEqualTo(0);
        assertThat(m.best(new int[] {1, 0}, tokens(7, 7))).as("no slot helps: the first listed").isEqualTo(1);
    }

    @Test
    void aBlockTwoSlotsHoldIsStoredOnceAndRemovedWhenTheLastLetsGo() {
        CacheMirror m = new CacheMirror(2, HASHER);
        int[] a = tokens(1, 2, 3, 4, 5, 6, 7, 8);
        long[] hashes = HASHER.seqHashes(a);
        List<KvEvent> first = m.hold(0, a);
        assertThat(first).hasSize(1);
        assertThat(first.get(0).getStored().getParentSeqHash()).isZero();
        assertThat(first.get(0).getStored().getBlocksList()).extracting(b -> b.getSeqHash())
                .containsExactly(hashes[0], hashes[1]);
        assertThat(m.hold(1, tokens(1, 2, 3, 4, 9, 9, 9, 9))).as("block 0 is already resident")
                .allSatisfy(e -> assertThat(e.getStored().getParentSeqHash()).isEqualTo(hashes[0]));
        List<KvEvent> dropped = m.hold(0, tokens(5, 5, 5, 5));
        assertThat(dropped.get(0).getRemoved().getSeqHashesList()).as("block 0 is still in slot 1")
                .containsExactly(hashes[1]);
    }

    @Test
    void theEventsReplayToTheResidentSetWhateverTheSlotsTake() {
        Random random = new Random(5);
        CacheMirror m = new CacheMirror(3, HASHER);
        Set<Long> replayed = new HashSet<>();
        for (int step = 0; step < 2000; step++) {
            int[] t = new int[random.nextInt(24)];
            for (int i = 0; i < t.length; i++) {
                t[i] = random.nextInt(3); // few distinct tokens: shared prefixes are common
            }
            for (KvEvent e : m.hold(random.nextInt(3), t)) {
                if (e.hasStored()) {
                    e.getStored().getBlocksList().forEach(b -> assertThat(replayed.add(b.getSeqHash())).isTrue());
                } else {
                    e.getRemoved().getSeqHashesList().forEach(h -> assertThat(replayed.remove(h)).isTrue());
                }
            }
            assertThat(replayed).containsExactlyInAnyOrderElementsOf(Arrays.stream(m.resident()).boxed().toList());
        }
    }
}
