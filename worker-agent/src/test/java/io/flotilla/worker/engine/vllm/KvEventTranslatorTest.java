package io.flotilla.worker.engine.vllm;

import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.StoredBlock;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class KvEventTranslatorTest {

    static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("m", "tok", "bf16/bs4/paged"), 4);
    static final int[] PROMPT = {11, 12, 13, 14, 21, 22, 23, 24, 31, 32, 33, 34};
    static final long[] SEQ = HASHER.seqHashes(PROMPT);

    private final KvEventCounters counters = new KvEventCounters();
    private final KvEventTranslator translator = new KvEventTranslator(HASHER, counters, 1000);

    static VllmEventBatch batch(VllmKvEvent... events) {
        return new VllmEventBatch(0, List.of(events), null);
    }

    static VllmKvEvent.BlockStored stored(Long parent, int[] tokens, long... engineHashes) {
        return new VllmKvEvent.BlockStored(engineHashes, parent, tokens, 4, null, null);
    }

    static VllmKvEvent.BlockRemoved removed(long... engineHashes) {
        return new VllmKvEvent.BlockRemoved(engineHashes, null);
    }

    static int[] slice(int[] t, int fromBlock, int toBlock) {
        return Arrays.copyOfRange(t, fromBlock * 4, toBlock * 4);
    }

    @Test
    void storedChainsGiveTheSameSeqHashesAsHashingTheWholePrompt() {
        List<KvEvent> first = translator.translate(batch(stored(null, slice(PROMPT, 0, 2), -100L, -101L)));
        List<KvEvent> second = translator.translate(batch(stored(-101L, slice(PROMPT, 2, 3), -102L)));

        assertThat(first).hasSize(1);
        assertThat(first.get(0).getStored().getParentSeqHash()).isZero();
        assertThat(first.get(0).getStored().getTier()).isEqualTo(KvTier.KV_TIER_DEVICE);
        assertThat(first.get(0).getStored().getBlocksList()).extracting(StoredBlock::getSeqHash).containsExactly(SEQ[0], SEQ[1]);
        assertThat(first.get(0).getStored().getBlocksList()).extracting(StoredBlock::getLocalHash)
                .containsExactly(HASHER.localHashes(PROMPT)[0], HASHER.localHashes(PROMPT)[1]);
        assertThat(second.get(0).getStored().getParentSeqHash()).isEqualTo(SEQ[1]);
        assertThat(second.get(0).getStored().getBlocks(0).getSeqHash()).isEqualTo(SEQ[2]);
        assertThat(translator.residentSeqHashes()).containsExactlyInAnyOrder(SEQ);
    }

    @Test
    void removalsTranslateThroughTheEngineHashMapping() {
        translator.translate(batch(stored(null, PROMPT, 1, 2, 3)));
        List<KvEvent> out = translator.translate(batch(removed(3, 2)));
        assertThat(out).hasSize(1);
        assertThat(out.get(0).getRemoved().getSeqHashesList()).containsExactly(SEQ[2], SEQ[1]);
        assertThat(translator.residentSeqHashes()).containsExactly(SEQ[0]);
    }

    @Test
    void aBlockCachedTwiceLeavesOnlyWithItsLastCopy() {
        translator.translate(batch(stored(null, slice(PROMPT, 0, 1), 1)));
        assertThat(translator.translate(batch(stored(null, slice(PROMPT, 0, 1), 1)))).as("second copy: nothing new").isEmpty();
        assertThat(translator.translate(batch(removed(1)))).isEmpty();
        assertThat(translator.translate(batch(removed(1)))).hasSize(1);
        assertThat(translator.residentCount()).isZero();
    }

    @Test
    void aStoreThatRepeatsAResidentPrefixSplitsIntoGroupsWithTheRightParents() {
        translator.translate(batch(stored(null, slice(PROMPT, 1, 2), 50))); // an unrelated root
        translator.translate(batch(stored(null, slice(PROMPT, 0, 2), 1, 2)));
        translator.translate(batch(removed(1))); // block 0 gone, block 1 still there
        List<KvEvent> out = translator.translate(batch(stored(null, PROMPT, 1, 2, 3)));
        assertThat(out).hasSize(2);
        assertThat(out.get(0).getStored().getParentSeqHash()).isZero();
        assertThat(out.get(0).getStored().getBlocksList()).extracting(StoredBlock::getSeqHash).containsExactly(SEQ[0]);
        assertThat(out.get(1).getStored().getParentSeqHash()).isEqualTo(SEQ[1]);
        assertThat(out.get(1).getStored().getBlocksList()).extracting(StoredBlock::getSeqHash).containsExactly(SEQ[2]);
    }

    @Test
    void untranslatableBlocksAreCountedAndLeftOut() {
        assertThat(translator.translate(batch(stored(999L, slice(PROMPT, 0, 1), 1)))).isEmpty();
        assertThat(translator.translate(batch(new VllmKvEvent.BlockStored(new long[]{2}, null, slice(PROMPT, 0, 1), 16, null, null)))).isEmpty();
        assertThat(translator.translate(batch(new VllmKvEvent.BlockStored(new long[]{3, 4}, null, slice(PROMPT, 0, 1), 4, null, null)))).isEmpty();
        assertThat(translator.translate(batch(new VllmKvEvent.BlockStored(new long[]{5}, null, new int[0], 4, null, null)))).isEmpty();
        assertThat(translator.translate(batch(new VllmKvEvent.BlockStored(new long[]{6}, null, slice(PROMPT, 0, 1), 4, 1, null)))).isEmpty();
        assertThat(translator.translate(batch(removed(77), new VllmKvEvent.Unknown("BlockPinned")))).isEmpty();

        assertThat(counters.unknownParent()).isEqualTo(1);
        assertThat(counters.blockSizeMismatch()).isEqualTo(1);
        assertThat(counters.missingTokens()).isEqualTo(3);
        assertThat(counters.loraBlocks()).isEqualTo(1);
        assertThat(counters.unknownRemoved()).isEqualTo(1);
        assertThat(counters.unknownEventTypes()).isEqualTo(1);
        assertThat(translator.residentCount()).isZero();
    }

    @Test
    void anEngineHashReusedForOtherTokensIsNotClaimed() {
        translator.translate(batch(stored(null, slice(PROMPT, 0, 1), 1)));
        assertThat(translator.translate(batch(stored(null, slice(PROMPT, 1, 2), 1)))).isEmpty();
        assertThat(counters.hashConflicts()).isEqualTo(1);
        assertThat(translator.residentSeqHashes()).containsExactly(SEQ[0]);
    }

    @Test
    void eachMediumIsItsOwnTierAndABlockLeavesEachOnItsOwn() {
        assertThat(translator.translate(batch(stored(null, slice(PROMPT, 0, 1), 1))).get(0).getStored().getTier())
                .isEqualTo(KvTier.KV_TIER_DEVICE);
        List<KvEvent> offload = translator.translate(batch(
                new VllmKvEvent.BlockStored(new long[]{1}, null, slice(PROMPT, 0, 1), 4, null, "CPU")));
        assertThat(offload).singleElement().satisfies(e -> {
            assertThat(e.getStored().getTier()).isEqualTo(KvTier.KV_TIER_HOST);
            assertThat(e.getStored().getBlocks(0).getSeqHash()).isEqualTo(SEQ[0]);
        });
        assertThat(translator.translate(batch(new VllmKvEvent.BlockRemoved(new long[]{1}, "GPU"))))
                .singleElement().satisfies(e -> assertThat(e.getRemoved().getTier()).isEqualTo(KvTier.KV_TIER_DEVICE));
        assertThat(translator.residentSeqHashes()).isEmpty();
        assertThat(translator.residentSeqHashes(KvTier.KV_TIER_HOST)).containsExactly(SEQ[0]);
        List<KvEvent> gone = translator.translate(batch(new VllmKvEvent.BlockRemoved(new long[]{1}, "CPU")));
        assertThat(gone.get(0).getRemoved().getTier()).isEqualTo(KvTier.KV_TIER_HOST);
        assertThat(translator.residentSeqHashes(KvTier.KV_TIER_HOST)).isEmpty();
        assertThat(KvEventTranslator.tier("cpu")).isEqualTo(KvTier.KV_TIER_HOST);
        assertThat(KvEventTranslator.tier("SHARED_STORAGE")).isEqualTo(KvTier.KV_TIER_DISK);
        assertThat(KvEventTranslator.tier(null)).isEqualTo(KvTier.KV_TIER_DEVICE);
    }

    @Test
    void cpuOffloadedBlocksAreIndexedAsHostTierFromBothWireForms() {
        long[] engine = {0xF000_0000_0000_0001L};
        int[] tokens = slice(PROMPT, 0, 1);
        byte[] array = MsgspecWire.batchArray(1.0, List.of(
                MsgspecWire.storedArray(MsgspecWire.hashes(engine[0]), null, tokens, 4, null, "CPU", false)), null);
        byte[] map = MsgspecWire.batchMap(1.0, List.of(
                MsgspecWire.storedMap(MsgspecWire.hashes(engine[0]), null, tokens, 4, null, "CPU")), null);
        for (byte[] wire : List.of(array, map)) {
            KvEventTranslator t = new KvEventTranslator(HASHER, new KvEventCounters(), 100);
            List<KvEvent> out = t.translate(VllmEventDecoder.decode(wire));
            assertThat(out).singleElement().satisfies(e -> {
                assertThat(e.getStored().getTier()).isEqualTo(KvTier.KV_TIER_HOST);
                assertThat(e.getStored().getBlocks(0).getSeqHash()).isEqualTo(SEQ[0]);
            });
            assertThat(t.residentSeqHashes(KvTier.KV_TIER_HOST)).containsExactly(SEQ[0]);
            assertThat(t.residentSeqHashes()).isEmpty();
        }
    }

    @Test
    void allBlocksClearedEmptiesTheViewButChildrenOfEvictedBlocksStillChain() {
        translator.translate(batch(stored(null, slice(PROMPT, 0, 2), 1, 2)));
        List<KvEvent> out = translator.translate(batch(new VllmKvEvent.AllBlocksCleared()));
        assertThat(out).singleElement().matches(KvEvent::hasCleared);
        assertThat(translator.residentCount()).isZero();

        List<KvEvent> child = translator.translate(batch(stored(2L, slice(PROMPT, 2, 3), 3)));
        assertThat(child.get(0).getStored().getBlocks(0).getSeqHash()).isEqualTo(SEQ[2]);
    }

    @Test
    void resyncKeepsTranslationsAndResetForgetsThem() {
        translator.translate(batch(stored(null, slice(PROMPT, 0, 1), 1)));
        assertThat(translator.resync()).singleElement().matches(KvEvent::hasCleared);
        assertThat(translator.resync()).as("nothing resident: nothing to say").isEmpty();
        assertThat(translator.translate(batch(removed(1)))).isEmpty();
        assertThat(counters.unknownRemoved()).isEqualTo(1);
        assertThat(translator.translate(batch(stored(1L, slice(PROMPT, 1, 2), 2)))).hasSize(1);

        translator.reset();
        assertThat(translator.translate(batch(stored(2L, slice(PROMPT, 2, 3), 3)))).isEmpty();
        assertThat(counters.unknownParent()).isEqualTo(1);
    }
}
