package io.flotilla.worker.api;

import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.KvTierStats;
import io.flotilla.protocol.v1.KvTierStatsResponse;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.KvTierStatus;
import io.flotilla.worker.engine.ResidentBlocks;

/** The worker's KV state as WorkerService answers it. Pure translation. */
public final class KvSnapshots {

    private KvSnapshots() {
    }

    /** Every tier's resident blocks, stamped with the KV event seq they correspond to. */
    public static KvSnapshot snapshot(WorkerIdentity identity, Engine engine) {
        ResidentBlocks resident = engine.residentBlocks();
        KvSnapshot.Builder b = KvSnapshot.newBuilder()
                .setWorkerId(identity.id())
                .setEpoch(identity.epoch())
                .setSeq(resident.position())
                .setBlockSize(identity.blockSize())
                .setModel(identity.model());
        for (long h : resident.seqHashes()) {
            b.addSeqHashes(h);
        }
        for (long h : resident.hostSeqHashes()) {
            b.addHostSeqHashes(h);
        }
        for (long h : resident.diskSeqHashes()) {
            b.addDiskSeqHashes(h);
        }
        return b.build();
    }

    /** Per tier capacity, use and totals; only the device (capacity from the load) without lower tiers. */
    public static KvTierStatsResponse tierStats(Engine engine) {
        KvTierStatsResponse.Builder out = KvTierStatsResponse.newBuilder();
        var tiers = engine.feature(KvTierStatus.class);
        if (tiers.isEmpty()) {
            var load = engine.load();
            out.addTiers(KvTierStats.newBuilder().setTier(KvTier.KV_TIER_DEVICE).setCapacityBlocks(load.totalKvBlocks())
                    .setUsedBlocks(engine.residentBlocks().count()));
            return out.build();
        }
        for (KvTierStatus.Tier t : tiers.get().tiers()) {
            out.addTiers(KvTierStats.newBuilder()
                    .setTier(t.tier())
                    .setCapacityBlocks(t.capacityBlocks())
                    .setUsedBlocks(t.usedBlocks())
                    .setHitTokens(t.stats().hitTokens())
                    .setOffloadedBlocks(t.stats().offloadedBlocks())
                    .setOnboardedBlocks(t.stats().onboardedBlocks())
                    .setCorruptBlocks(t.stats().corruptBlocks()));
        }
        return out.build();
    }
}
