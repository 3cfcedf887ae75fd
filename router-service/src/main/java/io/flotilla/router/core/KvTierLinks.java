package io.flotilla.router.core;

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
