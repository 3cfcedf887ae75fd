package io.flotilla.worker.kvbm;

import io.flotilla.protocol.v1.KvTier;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Totals since start for one KV tier (device, host or disk), written by the engine and tier threads
 * and read by metrics and {@code GetKvTierStats} from any thread.
 */
public final class TierStats {

    private final KvTier tier;
    final AtomicLong hitTokens = new AtomicLong();
    final AtomicLong offloadedBlocks = new AtomicLong();
    final AtomicLong offloadedBytes = new AtomicLong();
    final AtomicLong onboardedBlocks = new AtomicLong();
    final AtomicLong onboardedBytes = new AtomicLong();
    final AtomicLong corruptBlocks = new AtomicLong();
    final AtomicLong ioErrors = new AtomicLong();
    final AtomicLong skippedOffloads = new AtomicLong();

    public TierStats(KvTier tier) {
        this.tier = tier;
    }

    public KvTier tier() {
        return tier;
    }

    /** Prompt tokens requests found in this tier (reused from the device, onboarded from a lower tier). */
    public long hitTokens() {
        return hitTokens.get();
    }

    public void addHitTokens(long tokens) {
        hitTokens.addAndGet(tokens);
    }

    /** Blocks copied into this tier from the tier above. */
    public long offloadedBlocks() {
        return offloadedBlocks.get();
    }

    public long offloadedBytes() {
        return offloadedBytes.get();
    }

    /** Blocks copied from this tier into the device. */
    public long onboardedBlocks() {
        return onboardedBlocks.get();
    }

    public long onboardedBytes() {
        return onboardedBytes.get();
    }

    /** Blocks that failed verification when onboarded (dropped, recomputed). */
    public long corruptBlocks() {
        return corruptBlocks.get();
    }

    /** Blocks not copied into this tier because too many copies were in flight (the tier thread lagged). */
    public long skippedOffloads() {
        return skippedOffloads.get();
    }

    /** Reads or writes of this tier's storage that failed (the block was not stored or not onboarded). */
    public long ioErrors() {
        return ioErrors.get();
    }
}
