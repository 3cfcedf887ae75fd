package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

/**
 * Where the lower tiers report what they hold, in the order it changed; the engine turns these into
 * its KV event batches (always under its lock, so events and its resident-block snapshots agree).
 */
public interface TierEvents {

    void stored(KvTier tier, long seqHash);

    void removed(KvTier tier, long seqHash);

    /** Every block of {@code tier} is gone. */
    void cleared(KvTier tier);
}
