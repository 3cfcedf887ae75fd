package io.flotilla.worker.engine;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.kvbm.TierStats;

import java.util.List;

/**
 * An engine's KV tiers as the agent advertises and exports them: the device pool and the tiers below
 * it (host memory, disk), their size and use, the link a lower tier's blocks are onboarded over, and
 * their counters. Thread-safe.
 */
public interface KvTierStatus extends EngineFeature {

    /** Device first, then the lower tiers. A fresh snapshot per call. */
    List<Tier> tiers();

    /** Bytes one block stands for when onboarding is priced (modeled, may exceed the payload). */
    long bytesPerBlock();

    /** Sets the one observer of finished onboardings: source tier, blocks, wall time in nanoseconds. */
    void observeOnboarding(OnboardObserver observer);

    @FunctionalInterface
    interface OnboardObserver {
        void onboarded(KvTier tier, int blocks, long nanos);
    }

    /**
     * One tier.
     *
     * @param bytesPerSecond the link onboarding from this tier is charged at; 0 for the device
     */
    record Tier(KvTier tier, long capacityBlocks, long usedBlocks, double bytesPerSecond, TierStats stats) {
    }
}
