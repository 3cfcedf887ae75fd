package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.kvbm.LowerTiers;
import io.flotilla.worker.kvbm.ManualTierIo;
import io.flotilla.worker.kvbm.TierSettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lower KV tiers with real bytes: write-through to host memory, victim writes to disk, onboarding
 * back byte-exact, a corrupted disk slot as a miss, and a restart that keeps the disk tier.
 */
class TieredKvTest {

    private static final int BYTES = 256;

    @TempDir
    Path dir;

    private final ManualTierIo io = new ManualTierIo();
    private final KvEventReplay replay = new KvEventReplay();
    private long now;

    private SimEngineConfig config(int hostBlocks, int diskBlocks) {
        return SimTesting.small().totalBlocks(8).maxRunning(2).kvBytesPerBlock(BYTES)
                .tiers(TierSettings.of((long) hostBlocks * BYTES, dir, (long) diskBlocks * (BYTES + 64))).build();
    }

    @Test
    void blocksEvictedFromTheDeviceComeBackFromHostMemoryByteForByte() {
        Scheduler s = new Scheduler(config(16, 0), replay, io);
        int[] a = SimTesting.prompt(17, 1);
        long[] hashes = SimTesting.seqHashes(s.config(), a);
        serve(s, "a1", a);
        assertThat(s.tiers().seqHashes(KvTier.KV_TIER_HOST)).contains(hashes);
        serve(s, "b", SimTesting.prompt(29, 2)); // needs all 8 device blocks: a's are evicted
        for (long h : hashes) {
            assertThat(s.pool().lookup(h)).isNegative();
            assertThat(s.tiers().locate(h)).isEqualTo(KvTier.KV_TIER_HOST);
        }

        RecordingSink sink = serve(s, "a2", a);

        assertThat(sink.cachedTokens).isEqualTo(16);
        assertThat(s.tiers().stats(KvTier.KV_TIER_HOST).onboardedBlocks()).isEqualTo(4);
        assertThat(s.tiers().stats(KvTier.KV_TIER_HOST).hitTokens()).isEqualTo(16);
        for (long h : hashes) {
            int slot = s.pool().lookup(h);
            assertThat(slot).as("onboarded block is resident").isNotNegative();
            assertThat(s.pool().payloads().firstMismatch(slot, h)).as("byte-exact").isNegative();
        }
        assertConsistent(s);
    }

    @Test
    void hostVictimsGoToDiskAndComeBackFromIt() {
        Scheduler s = new Scheduler(config(4, 64), replay, io);
        int[] a = SimTesting.prompt(17, 1);
        long[] hashes = SimTesting.seqHashes(s.config(), a);
        serve(s, "a1", a);
        serve(s, "b", SimTesting.prompt(29, 2));
        for (long h : hashes) {
            assertThat(s.tiers().locate(h)).isEqualTo(KvTier.KV_TIER_DISK);
        }

        RecordingSink sink = serve(s, "a2", a);

        assertThat(sink.cachedTokens).isEqualTo(16);
        assertThat(s.tiers().stats(KvTier.KV_TIER_DISK).onboardedBlocks()).isEqualTo(4);
        for (long h : hashes) {
            assertThat(s.pool().payloads().firstMismatch(s.pool().lookup(h), h)).isNegative();
        }
        assertConsistent(s);
    }

    /**
     * The tier thread publishes under the engine lock: a batch of copies whose host victims go to disk
     * and push disk victims out must publish one event per tier and kind, not one per block.
     */
    @Test
    void anOffloadBatchWithDiskVictimsPublishesOneEventPerTierAndKind() {
        List<List<KvEvent>> tierBatches = new ArrayList<>();
        Scheduler s = new Scheduler(config(4, 4), (pos, batch) -> {
            if (batch.stream().noneMatch(TieredKvTest::isDeviceEvent)) {
                tierBatches.add(batch);
            }
            replay.onEvents(pos, batch);
        }, io);
        for (int i = 1; i <= 4; i++) {
            serve(s, "p" + i, SimTesting.prompt(17, i)); // 4 blocks each: host full after p1, disk after p2
        }

        assertThat(tierBatches).as("a batch evicting from host and disk at once")
                .anyMatch(b -> countOf(b, KvEvent.EventCase.REMOVED, KvTier.KV_TIER_HOST) == 1
                        && countOf(b, KvEvent.EventCase.REMOVED, KvTier.KV_TIER_DISK) == 1);
        for (List<KvEvent> batch : tierBatches) {
            for (KvTier tier : new KvTier[] {KvTier.KV_TIER_HOST, KvTier.KV_TIER_DISK}) {
                assertThat(countOf(batch, KvEvent.EventCase.REMOVED, tier)).as("removals from " + tier).isLessThanOrEqualTo(1);
                assertThat(countOf(batch, KvEvent.EventCase.STORED, tier)).as("stores into " + tier).isLessThanOrEqualTo(1);
            }
        }
        assertThat(replay.events.stream().filter(e -> e.getEventCase() == KvEvent.EventCase.REMOVED
                && e.getRemoved().getTier() == KvTier.KV_TIER_DISK).mapToInt(e -> e.getRemoved().getSeqHashesCount()).sum())
                .as("disk victims").isEqualTo(8);
        assertConsistent(s);
    }

    private static boolean isDeviceEvent(KvEvent e) {
        return switch (e.getEventCase()) {
            case STORED -> e.getStored().getTier() == KvTier.KV_TIER_DEVICE;
            case REMOVED -> e.getRemoved().getTier() == KvTier.KV_TIER_DEVICE;
            case CLEARED -> e.getCleared().getTier() == KvTier.KV_TIER_DEVICE;
            default -> false;
        };
    }

    private static long countOf(List<KvEvent> batch, KvEvent.EventCase kind, KvTier tier) {
        return batch.stream().filter(e -> e.getEventCase() == kind)
                .filter(e -> (kind == KvEvent.EventCase.STORED ? e.getStored().getTier() : e.getRemoved().getTier()) == tier)
                .count();
    }

    @Test
    void aCorruptedDiskSlotIsAMissAndItsTokensAreRecomputed() throws IOException {
        Scheduler s = new Scheduler(config(4, 64), replay, io);
        int[] a = SimTesting.prompt(17, 1);
        long[] hashes = SimTesting.seqHashes(s.config(), a);
        serve(s, "a1", a);
        serve(s, "b", SimTesting.prompt(29, 2));
        LowerTiers.DiskLocation at = s.tiers().diskLocation(hashes[1]).orElseThrow();
        try (RandomAccessFile f = new RandomAccessFile(at.file().toFile(), "rw")) {
            f.seek(at.payloadOffset() + 17);
            int b = f.read();
            f.seek(at.payloadOffset() + 17);
            f.write(b ^ 0x40);
        }

        RecordingSink sink = serve(s, "a2", a);

        assertThat(sink.cachedTokens).as("only the block before the corrupt one was onboarded").isEqualTo(4);
        assertThat(s.tiers().stats(KvTier.KV_TIER_DISK).corruptBlocks()).isEqualTo(1);
        assertThat(s.tiers().locate(hashes[1])).isNotEqualTo(KvTier.KV_TIER_DISK);
        for (long h : hashes) {
            int slot = s.pool().lookup(h);
            assertThat(slot).as("recomputed and resident").isNotNegative();
            assertThat(s.pool().payloads().firstMismatch(slot, h)).as("never wrong KV").isNegative();
        }
        assertConsistent(s);
    }

    @Test
    void aRestartKeepsTheDiskTierAndAnnouncesItInItsFirstBatch() {
        Scheduler first = new Scheduler(config(4, 64), replay, io);
        int[] a = SimTesting.prompt(17, 1);
        long[] hashes = SimTesting.seqHashes(first.config(), a);
        serve(first, "a1", a);
        serve(first, "b", SimTesting.prompt(29, 2));
        first.closeTiers();

        KvEventReplay fresh = new KvEventReplay();
        ManualTierIo io2 = new ManualTierIo();
        Scheduler second = new Scheduler(config(4, 64), fresh, io2);
        second.flushEvents();

        assertThat(fresh.position).isEqualTo(1);
        assertThat(fresh.disk).contains(hashes[0], hashes[1], hashes[2], hashes[3]);
        assertThat(KvEventReplay.asSet(second.residentBlocks().diskSeqHashes())).isEqualTo(fresh.disk);
        RecordingSink sink = new RecordingSink();
        second.submit(SimTesting.request("a2", a, 1), sink);
        drive(second, io2);
        assertThat(sink.cachedTokens).isEqualTo(16);
        assertThat(second.tiers().stats(KvTier.KV_TIER_DISK).onboardedBlocks()).isEqualTo(4);
        second.closeTiers();
    }

    @Test
    void clearingTheCacheEmptiesEveryTierAlsoAcrossARestart() {
        Scheduler first = new Scheduler(config(4, 64), replay, io);
        serve(first, "a1", SimTesting.prompt(17, 1));
        serve(first, "b", SimTesting.prompt(29, 2));
        first.clearCache();
        io.runAll();
        assertThat(replay.host).isEmpty();
        assertThat(replay.disk).isEmpty();
        first.closeTiers();

        Scheduler second = new Scheduler(config(4, 64), new KvEventReplay(), new ManualTierIo());
        assertThat(second.residentBlocks().diskSeqHashes()).isEmpty();
        second.closeTiers();
    }

    @Test
    void recomputingIsChosenWhenTheLinkIsSlowerThanThePrefill() {
        SimEngineConfig slow = SimTesting.small().totalBlocks(8).maxRunning(2).kvBytesPerBlock(BYTES)
                .tiers(new TierSettings(16L * BYTES, dir, 0, 1.0, 1.0, 0)).build(); // 1 byte/s
        Scheduler s = new Scheduler(slow, replay, io);
        int[] a = SimTesting.prompt(17, 1);
        serve(s, "a1", a);
        serve(s, "b", SimTesting.prompt(29, 2));

        RecordingSink sink = serve(s, "a2", a);

        assertThat(sink.cachedTokens).isZero();
        assertThat(s.tiers().stats(KvTier.KV_TIER_HOST).onboardedBlocks()).isZero();
        assertConsistent(s);
    }

    private RecordingSink serve(Scheduler s, String id, int[] prompt) {
        RecordingSink sink = new RecordingSink();
        s.submit(SimTesting.request(id, prompt, 1), sink);
        drive(s, io);
        assertThat(sink.finishReason).as(id + " finished").isNotNull();
        return sink;
    }

    /** Steps (advancing simulated time, waiting out onboarding) and runs tier jobs until all is done. */
    private void drive(Scheduler s, ManualTierIo tierIo) {
        for (int i = 0; i < 500; i++) {
            tierIo.runAll();
            if (s.isIdle()) {
                tierIo.runAll();
                return;
            }
            StepPlan plan = s.schedule(now);
            if (plan.isEmpty()) {
                now += 1;
                continue;
            }
            now += (long) Math.ceil(plan.stepMs());
            s.complete(plan);
        }
        throw new AssertionError("not idle after 500 steps");
    }

    private void assertConsistent(Scheduler s) {
        io.runAll();
        assertThat(replay.violations).isEmpty();
        assertThat(KvEventReplay.asSet(s.residentBlocks().seqHashes())).isEqualTo(replay.resident);
        assertThat(KvEventReplay.asSet(s.residentBlocks().hostSeqHashes())).isEqualTo(replay.host);
        assertThat(KvEventReplay.asSet(s.residentBlocks().diskSeqHashes())).isEqualTo(replay.disk);
        s.pool().verifyInvariants();
        s.tiers().verifyInvariants();
        s.closeTiers();
    }

}
