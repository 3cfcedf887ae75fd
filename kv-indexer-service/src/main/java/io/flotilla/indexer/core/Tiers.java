package io.flotilla.indexer.core;

import io.flotilla.protocol.v1.KvTier;

/** The index's tier numbering: 0 device, 1 host memory, 2 disk. */
final class Tiers {

    static final int DEVICE = 0;
    static final int HOST = 1;
    static final int DISK = 2;
    static final int COUNT = 3;

    private Tiers() {
    }

    /** The index of an event's tier; UNSPECIFIED (producers before tiers) is the device. */
    static int of(KvTier tier) {
        return switch (tier) {
            case KV_TIER_HOST -> HOST;
            case KV_TIER_DISK -> DISK;
            default -> DEVICE;
        };
    }

    static KvTier proto(int tier) {
        return switch (tier) {
            case HOST -> KvTier.KV_TIER_HOST;
            case DISK -> KvTier.KV_TIER_DISK;
            default -> KvTier.KV_TIER_DEVICE;
        };
    }
}
