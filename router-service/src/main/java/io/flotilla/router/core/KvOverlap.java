package io.flotilla.router.core;

/**
 * What a worker holds of one request's prefix, per KV tier (from {@code FindMatches}).
 *
 * @param deviceRun leading blocks held on the device (reused as they are)
 * @param device    of the leading blocks held in any tier, those best held on the device
 * @param host      ... best held in host memory (onboarded over the host link)
 * @param disk      ... best held on disk (onboarded from disk)
 */
public record KvOverlap(int deviceRun, int device, int host, int disk) {

    public static final KvOverlap NONE = new KvOverlap(0, 0, 0, 0);

    public KvOverlap {
        if (deviceRun < 0 || device < 0 || host < 0 || disk < 0 || deviceRun > device + host + disk) {
            throw new IllegalArgumentException("inconsistent overlap " + deviceRun + "/" + device + "/" + host + "/" + disk);
        }
    }

    /** A worker (or an indexer) without lower tiers: {@code blocks} leading blocks on the device. */
    public static KvOverlap deviceOnly(int blocks) {
        return blocks <= 0 ? NONE : new KvOverlap(blocks, blocks, 0, 0);
    }

    /** Leading blocks held in any tier. */
    public int anyTier() {
        return device + host + disk;
    }

    public boolean hasLowerTiers() {
        return host + disk > 0;
    }
}
