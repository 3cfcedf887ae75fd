package io.flotilla.indexer.core;

/**
 * A reader's picture of one worker, built from fields the writer publishes one by one: each value
 * is current or slightly old, and values may be from neighbouring instants.
 *
 * @param workerId        the worker
 * @param state           live, unverified or expired
 * @param epoch           the worker process's epoch the index follows
 * @param lastSeq         the last batch seq applied (or the snapshot seq) in that epoch
 * @param blocks          blocks the index holds for the worker
 * @param leaseDeadlineMs the index's clock time after which the lease expires (frozen while the
 *                        membership feed is unhealthy)
 */
public record WorkerView(String workerId, WorkerState state, long epoch, long lastSeq, long blocks,
                         long leaseDeadlineMs) {
}
