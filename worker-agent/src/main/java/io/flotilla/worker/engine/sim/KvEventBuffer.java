package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.AllBlocksCleared;
import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.StoredBlock;
import io.flotilla.worker.kvbm.TierEvents;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects the pool's and the lower tiers' KV events in the order they were applied, merging runs: a
 * device block whose parent is the last block of the open device {@code BlockStored} extends it, a
 * lower-tier block extends an open {@code BlockStored} of its tier (lower-tier stores are not chains:
 * parent and local hash 0), and consecutive removals from one tier share one {@code BlockRemoved}.
 * Merging never reorders, so replay gives the same set.
 */
final class KvEventBuffer implements TierEvents {

    private final List<KvEvent> sealed = new ArrayList<>();
    private BlockStored.Builder openStored;
    private long openStoredLast;
    private BlockRemoved.Builder openRemoved;

    /** A device block became resident. */
    void stored(long parentSeqHash, long seqHash, long localHash) {
        StoredBlock block = StoredBlock.newBuilder().setSeqHash(seqHash).setLocalHash(localHash).build();
        if (openStored != null && openStored.getTier() == KvTier.KV_TIER_DEVICE && openStoredLast == parentSeqHash) {
            openStored.addBlocks(block);
        } else {
            seal();
            openStored = BlockStored.newBuilder().setParentSeqHash(parentSeqHash).setTier(KvTier.KV_TIER_DEVICE)
                    .addBlocks(block);
        }
        openStoredLast = seqHash;
    }

    /** A device block was evicted or dropped. */
    void removed(long seqHash) {
        removed(KvTier.KV_TIER_DEVICE, seqHash);
    }

    /** Nothing stays on the device. */
    void cleared() {
        cleared(KvTier.KV_TIER_DEVICE);
    }

    @Override
    public void stored(KvTier tier, long seqHash) {
        if (tier == KvTier.KV_TIER_DEVICE) {
            throw new IllegalArgumentException("device blocks are stored with their parent");
        }
        if (openStored == null || openStored.getTier() != tier) {
            seal();
            openStored = BlockStored.newBuilder().setTier(tier);
        }
        openStored.addBlocks(StoredBlock.newBuilder().setSeqHash(seqHash));
        openStoredLast = seqHash;
    }

    @Override
    public void removed(KvTier tier, long seqHash) {
        if (openRemoved == null || openRemoved.getTier() != tier) {
            seal();
            openRemoved = BlockRemoved.newBuilder().setTier(tier);
        }
        openRemoved.addSeqHashes(seqHash);
    }

    @Override
    public void cleared(KvTier tier) {
        seal();
        sealed.add(KvEvent.newBuilder().setCleared(AllBlocksCleared.newBuilder().setTier(tier)).build());
    }

    boolean isEmpty() {
        return sealed.isEmpty() && openStored == null && openRemoved == null;
    }

    /** Everything collected since the last drain, oldest first; leaves the buffer empty. */
    List<KvEvent> drain() {
        seal();
        List<KvEvent> out = List.copyOf(sealed);
        sealed.clear();
        return out;
    }

    private void seal() {
        if (openStored != null) {
            sealed.add(KvEvent.newBuilder().setStored(openStored).build());
            openStored = null;
        }
        if (openRemoved != null) {
            sealed.add(KvEvent.newBuilder().setRemoved(openRemoved).build());
            openRemoved = null;
        }
    }
}
