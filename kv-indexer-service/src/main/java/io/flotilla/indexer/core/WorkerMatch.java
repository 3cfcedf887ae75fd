package io.flotilla.indexer.core;

/**
 * One worker's answer to a prefix query.
 *
 * @param workerId      the worker
 * @param matchedBlocks leading blocks of the query the worker holds on the device
 * @param deviceBlocks  of the leading blocks it holds in any tier, those best held on the device
 * @param hostBlocks    ... best held in host memory (onboarded over the host link)
 * @param diskBlocks    ... best held on disk; {@code deviceBlocks + hostBlocks + diskBlocks} is the
 *                      any-tier prefix, at least 1 and at least {@code matchedBlocks}
 */
public record WorkerMatch(String workerId, int matchedBlocks, int deviceBlocks, int hostBlocks, int diskBlocks) {

    /** A worker holding its matched blocks on the device only. */
    public WorkerMatch(String workerId, int matchedBlocks) {
        this(workerId, matchedBlocks, matchedBlocks, 0, 0);
    }

    /** The leading blocks held in any tier. */
    public int anyTierBlocks() {
        return deviceBlocks + hostBlocks + diskBlocks;
    }
}
