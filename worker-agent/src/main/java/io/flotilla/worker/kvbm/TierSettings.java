package io.flotilla.worker.kvbm;

import java.nio.file.Path;

/**
 * How big the lower KV tiers are and what moving a block over their links costs.
 *
 * @param hostBytes           host-memory tier size in bytes (off-heap); 0 disables it (and the disk tier,
 *                            which is filled from it)
 * @param diskDir             directory of the disk tier's files (one worker's own)
 * @param diskBytes           disk tier size in bytes; 0 disables it
 * @param hostBytesPerSecond  host↔device link bandwidth onboarding is charged at (PCIe 4.0 x16: 25 GB/s)
 * @param diskBytesPerSecond  disk→device bandwidth onboarding is charged at (a PCIe 4.0 NVMe drive: 3 GB/s)
 * @param modeledBytesPerBlock bytes one block stands for when charging onboarding time (a real model's
 *                            KV block, e.g. 2 MiB for Llama-3.1-8B bf16 at 16 tokens); 0: the payload size
 */
public record TierSettings(long hostBytes, Path diskDir, long diskBytes, double hostBytesPerSecond,
                           double diskBytesPerSecond, long modeledBytesPerBlock) {

    public static final double DEFAULT_HOST_BYTES_PER_SECOND = 25e9;
    public static final double DEFAULT_DISK_BYTES_PER_SECOND = 3e9;

    public TierSettings {
        if (hostBytes < 0 || diskBytes < 0 || modeledBytesPerBlock < 0) {
            throw new IllegalArgumentException("KV tier sizes must not be negative");
        }
        if (!(hostBytesPerSecond > 0) || !(diskBytesPerSecond > 0) || Double.isInfinite(hostBytesPerSecond)
                || Double.isInfinite(diskBytesPerSecond)) {
            throw new IllegalArgumentException("KV tier link bandwidths must be positive and finite");
        }
        if (diskBytes > 0 && diskDir == null) {
            throw new IllegalArgumentException("a disk tier needs a directory");
        }
    }

    /** No lower tier at all. */
    public static final TierSettings OFF = new TierSettings(0, null, 0, DEFAULT_HOST_BYTES_PER_SECOND,
            DEFAULT_DISK_BYTES_PER_SECOND, 0);

    public static TierSettings of(long hostBytes, Path diskDir, long diskBytes) {
        return new TierSettings(hostBytes, diskDir, diskBytes, DEFAULT_HOST_BYTES_PER_SECOND,
                DEFAULT_DISK_BYTES_PER_SECOND, 0);
    }

    public boolean enabled() {
        return hostBytes > 0;
    }

    public boolean diskEnabled() {
        return hostBytes > 0 && diskBytes > 0;
    }

    public TierSettings withDiskDir(Path dir) {
        return new TierSettings(hostBytes, dir, diskBytes, hostBytesPerSecond, diskBytesPerSecond, modeledBytesPerBlock);
    }
}
