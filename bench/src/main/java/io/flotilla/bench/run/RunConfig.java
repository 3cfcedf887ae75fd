package io.flotilla.bench.run;

import java.time.Duration;

/**
 * Load-generator limits.
 *
 * @param maxRequests stop after sending this many requests (follow-up turns count); 0 = no limit
 * @param duration    stop sending after this long; {@code null} = until the workload ends
 * @param concurrency most requests in flight at once; 0 = no cap (open loop)
 * @param speedup     workload time is divided by this (trace timestamps, synthetic arrivals, think times)
 * @param blockSize   serving block size for the oracle hit rate
 * @param drainWait   after a stop, how long in-flight requests may finish before they are cancelled
 * @param lruBlocks   capacity of the same-capacity LRU reference ({@code LruHitRate}); 0 = none
 */
public record RunConfig(long maxRequests, Duration duration, int concurrency, double speedup, int blockSize,
                        Duration drainWait, long lruBlocks) {

    public RunConfig(long maxRequests, Duration duration, int concurrency, double speedup, int blockSize,
                     Duration drainWait) {
        this(maxRequests, duration, concurrency, speedup, blockSize, drainWait, 0);
    }

    public RunConfig withLruBlocks(long blocks) {
        return new RunConfig(maxRequests, duration, concurrency, speedup, blockSize, drainWait, blocks);
    }

    public RunConfig {
        if (!(speedup > 0)) {
            throw new IllegalArgumentException("--speedup must be positive, got " + speedup);
        }
        if (maxRequests < 0 || concurrency < 0 || blockSize < 1 || lruBlocks < 0) {
            throw new IllegalArgumentException("--max-requests and --concurrency must be >= 0 and --block-size >= 1");
        }
    }
}
