package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.AllBlocksCleared;
import io.flotilla.protocol.v1.BlockRemoved;
import io.flotilla.protocol.v1.BlockStored;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.StoredBlock;

import java.util.ArrayList;
import java.util.List;

/**
 * Collects the pool's KV events in the order the pool applied them, merging runs: a stored block
 * whose parent is the last block of the open {@code BlockStored} extends it, and consecutive
 * removals share one {@code BlockRemoved}. Merging never reorders, so replay gives the same set.
 */
final class KvEventBuffer {

    private final List<KvEvent> sealed = new ArrayList<>();
    private BlockStored.Builder openStored;
    private long openStoredLast;
    private BlockRemoved.Builder openRemoved;

    void stored(long parentSeqHash, long seqHash, long localHash) {
        StoredBlock block = StoredBlock.newBuilder().setSeqHash(seqHash).setLocalHash(localHash).build();
        if (openStored != null && openStoredLast == parentSeqHash) {
            openStored.addBlocks(block);
        } else {
            seal();
            openStored = BlockStored.newBuilder().setParentSeqHash(parentSeqHash).setTier(KvTier.KV_TIER_DEVICE)
                    .addBlocks(block);
        }
        openStoredLast = seqHash;
    }

    void removed(long seqHash) {
        if (openRemoved == null) {
            seal();
            openRemoved = BlockRemoved.newBuilder().setTier(KvTier.KV_TIER_DEVICE);
        }
        openRemoved.addSeqHashes(seqHash);
    }

    void cleared() {
        seal();
        sealed.add(KvEvent.newBuilder().setCleared(AllBlocksCleared.getDefaultInstance()).build());
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
