package io.flotilla.router.core;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.KvTierLink;
import io.flotilla.protocol.v1.KvTiers;

/**
 * What onboarding a block from a worker's lower KV tiers costs ({@code WorkerStatus.kv_tiers}).
 *
 * <pre>
 * onboard_ms(h, k) = (h · bytesPerBlock / hostBytesPerSecond + k · bytesPerBlock / diskBytesPerSecond) · 1000 / speedup
 * </pre>
 * A tier the worker does not advertise has bandwidth 0: its blocks cannot be priced and count as
 * recomputed.
 */
public record KvTierLinks(long bytesPerBlock, double hostBytesPerSecond, double diskBytesPerSecond) {

    public static final KvTierLinks NONE = new KvTierLinks(0, 0, 0);

    public KvTierLinks {
        if (bytesPerBlock < 0 || !(hostBytesPerSecond >= 0) || !(diskBytesPerSecond >= 0)
                || Double.isInfinite(hostBytesPerSecond) || Double.isInfinite(diskBytesPerSecond)) {
            throw new IllegalArgumentException("tier links must be finite and not negative");
        }
    }

    public static KvTierLinks fromProto(KvTiers t, boolean present) {
        if (!present || t.getBytesPerBlock() == 0) {
            return NONE;
        }
        double host = 0;
        double disk = 0;
        for (KvTierLink l : t.getTiersList()) {
            if (l.getTier() == KvTier.KV_TIER_HOST) {
                host = l.getBytesPerSecond();
            } else if (l.getTier() == KvTier.KV_TIER_DISK) {
                disk = l.getBytesPerSecond();
            }
        }
        return new KvTierLinks(t.getBytesPerBlock(), Math.max(0, host), Math.max(0, disk));
    }

    public boolean prices(KvOverlap o) {
        return bytesPerBlock > 0 && (o.host() == 0 || hostBytesPerSecond > 0) && (o.disk() == 0 || diskBytesPerSecond > 0);
    }

    /** Milliseconds to onboard {@code host} host-memory and {@code disk} disk blocks (before the speedup). */
    public double onboardMs(int host, int disk) {
        double s = 0;
        if (host > 0) {
            s += (double) host * bytesPerBlock / hostBytesPerSecond;
        }
        if (disk > 0) {
            s += (double) disk * bytesPerBlock / diskBytesPerSecond;
        }
        return s * 1000;
    }
}
