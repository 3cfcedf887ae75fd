package io.flotilla.router.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A prefix block in a lower KV tier counts as saved prefill minus its onboarding time: with equal
 * queues the device beats host memory, host memory beats disk, disk beats a cold worker, and a link
 * slower than recomputing counts as cold.
 */
class TierPricingTest {

    private static final RoutingPolicy KV = new RoutingPolicy(RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER),
            new Random(1));
    /** 256 KiB blocks over PCIe 4.0 x16 and an NVMe drive: both links beat recomputing 16 tokens (0.24 ms). */
    private static final KvTierLinks LINKS = new KvTierLinks(256 << 10, 25e9, 3e9);
    private static final RoutingRequest R = Fixtures.request("r", 2048);

    private static WorkerView tiered(String id, KvTierLinks links) {
        WorkerView w = Fixtures.withTiming(Fixtures.worker(id), Fixtures.MOCKER, 8192);
        return new WorkerView(w.id(), w.role(), w.model(), w.blockSize(), w.kvLayout(), w.endpoint(), w.state(),
                w.routable(), w.timing(), w.totalKvBlocks(), w.load(), links);
    }

    private static Map<String, KvOverlap> prefixes() {
        return Map.of("device", KvOverlap.deviceOnly(127), "host", new KvOverlap(0, 0, 127, 0),
                "disk", new KvOverlap(0, 0, 0, 127), "mixed", new KvOverlap(64, 64, 63, 0));
    }

    private static Decision decide(List<WorkerView> workers) {
        return KV.decide(R, ClusterSnapshot.ofTiers(workers, prefixes(), OverlapSource.INDEXER, Map.of(), Map.of()));
    }

    @Test
    void deviceBeatsHostBeatsDiskBeatsColdWithEqualQueues() {
        List<WorkerView> all = List.of(tiered("device", LINKS), tiered("host", LINKS), tiered("disk", LINKS),
                tiered("cold", LINKS), tiered("mixed", LINKS));
        Decision d = decide(all);
        Map<String, Double> cost = d.scores();
        assertThat(cost.get("device")).isLessThan(cost.get("mixed"));
        assertThat(cost.get("mixed")).isLessThan(cost.get("host"));
        assertThat(cost.get("host")).isLessThan(cost.get("disk"));
        assertThat(cost.get("disk")).isLessThan(cost.get("cold"));
        assertThat(d.workerId()).isEqualTo("device");
        assertThat(d.prefixTier()).isEqualTo("device");

        Decision withoutDevice = decide(List.of(tiered("host", LINKS), tiered("disk", LINKS), tiered("cold", LINKS)));
        assertThat(withoutDevice.workerId()).isEqualTo("host");
        assertThat(withoutDevice.onboardHostBlocks()).isEqualTo(127);
        assertThat(withoutDevice.prefixTier()).isEqualTo("host");
        assertThat(withoutDevice.newPrefillTokens()).isEqualTo(2048 - 127 * 16);

        Decision onlyLower = decide(List.of(tiered("disk", LINKS), tiered("cold", LINKS)));
        assertThat(onlyLower.workerId()).isEqualTo("disk");
        assertThat(onlyLower.onboardDiskBlocks()).isEqualTo(127);
    }

    @Test
    void theOnboardingTermIsBytesOverTheLink() {
        WorkerView host = tiered("host", LINKS);
        Candidate c = Candidate.of(R, host, new KvOverlap(0, 0, 127, 0), ActiveLoad.NONE, ActiveLoad.NONE, LoadMerge.DELTA);
        assertThat(c.onboardMs()).isCloseTo(127 * (256 << 10) / 25e9 * 1000, org.assertj.core.data.Offset.offset(1e-9));
        assertThat(c.cachedTokens()).isEqualTo(127 * 16);
        assertThat(c.residentTokens()).as("onboarded blocks take new device blocks").isZero();
        assertThat(c.newBlocks(R)).isEqualTo(R.bookedBlocks());
    }

    @Test
    void aLinkSlowerThanRecomputingCountsAsCold() {
        // Llama-3.1-8B's 2 MiB blocks from a 3 GB/s disk take 0.7 ms each, more than recomputing them
        KvTierLinks slow = new KvTierLinks(2 << 20, 25e9, 3e9);
        Candidate c = Candidate.of(R, tiered("disk", slow), new KvOverlap(0, 0, 0, 127), ActiveLoad.NONE, ActiveLoad.NONE,
                LoadMerge.DELTA);
        assertThat(c.cachedTokens()).isZero();
        assertThat(c.onboardMs()).isZero();
        assertThat(c.onboardDisk()).isZero();
    }

    @Test
    void lowerTiersWithoutAdvertisedLinksAreNotCredited() {
        Candidate c = Candidate.of(R, tiered("host", KvTierLinks.NONE), new KvOverlap(0, 0, 127, 0), ActiveLoad.NONE,
                ActiveLoad.NONE, LoadMerge.DELTA);
        assertThat(c.cachedTokens()).isZero();
    }

    @Test
    void inBlockUnitsTheOrderHoldsToo() {
        List<WorkerView> untimed = List.of("device", "host", "disk", "cold").stream()
                .map(id -> {
                    WorkerView w = Fixtures.untimed(id);
                    return new WorkerView(w.id(), w.role(), w.model(), w.blockSize(), w.kvLayout(), w.endpoint(), w.state(),
                            w.routable(), w.timing(), w.totalKvBlocks(), w.load(), LINKS);
                }).toList();
        Decision d = decide(untimed);
        assertThat(d.unit()).isEqualTo(CostUnit.BLOCKS);
        assertThat(d.scores().get("device")).isLessThan(d.scores().get("host"));
        assertThat(d.scores().get("host")).isLessThan(d.scores().get("disk"));
        assertThat(d.scores().get("disk")).isLessThan(d.scores().get("cold"));
    }
}
