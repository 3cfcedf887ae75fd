package io.flotilla.indexer.core;

/**
 * A decision: ask worker {@code workerId} for its KV snapshot ({@code WorkerService.GetKvSnapshot})
 * and hand the answer to {@link KvEventApplier#onSnapshot}. The applier never calls out itself.
 *
 * @param workerId the worker to ask
 * @param epoch    the epoch the index expects the snapshot from
 * @param afterSeq the last seq the index applied for that epoch
 * @param reason   why the index no longer trusts the worker's set
 */
public record ReconcileRequest(String workerId, long epoch, long afterSeq, Reason reason) {

    /** Why a reconciliation was requested. */
    public enum Reason {
        /** A batch arrived with {@code seq > cursor + 1}. */
        GAP,
        /** A load report's digest (count, xor) disagreed with the index at the same seq. */
        DRIFT,
        /** The worker's lease had expired and a fresh heartbeat brought it back: its blocks were dropped. */
        REVIVED,
        /** The snapshot that arrived was older than what the index already applied. */
        STALE_SNAPSHOT,
        /** The previous request got no answer in time. */
        RETRY,
        /** The worker was restored from an index snapshot taken while it was unverified. */
        RESTORED
    }
}
