package io.flotilla.indexer.service;

import io.flotilla.protocol.v1.KvEventBatch;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Where the indexer's inputs come from: membership ({@code flotilla.workers}, from its start), KV event
 * batches ({@code flotilla.kv-events}, from given offsets) and load reports ({@code flotilla.worker-load},
 * from now). {@link KafkaIndexFeeds} reads Kafka; tests use an in-memory twin. Feeds call the
 * {@link Sink} on their own threads and in the order they read; the sink only enqueues.
 */
public interface IndexFeeds extends AutoCloseable {

    /** One kv-events record: where it was read (for snapshot offsets) and its value (null when malformed). */
    record KvRecord(int partition, long offset, KvEventBatch batch) {
    }

    /** Where feeds deliver. */
    interface Sink {
        void kvRecords(List<KvRecord> records);

        void statuses(List<WorkerStatus> statuses);

        void loads(List<WorkerLoad> loads);

        /**
         * A sharded KV feed was assigned {@code partitions} (the whole assignment) of {@code partitionCount}: the
         * indexer rebuilds for them and answers where each resumes (partition → next offset; absent: the earliest).
         * Called on the feed's thread, which waits for the answer before it reads on.
         */
        Map<Integer, Long> assigned(Set<Integer> partitions, int partitionCount);

        /**
         * A sharded KV feed gives {@code partitions} back to its group (a rebalance, or leaving it): the indexer
         * writes their snapshots, so that their next owner, sharing the snapshot directory, resumes from here
         * instead of replaying them from the start. Called on the feed's thread, which waits before it rejoins; the
         * group assigns the partitions to another shard only after that.
         */
        void revoked(Set<Integer> partitions);
    }

    /** Starts reading membership from the start of its topic. */
    void startMembership(Sink sink);

    /** True once the membership feed has read to the end of its topic (replayed every worker). */
    boolean membershipCaughtUp();

    /**
     * Starts reading KV events from {@code kvFrom} (partition → next offset; others from the start) and load from now.
     * A sharded feed reads only the partitions its group assigns and asks {@link Sink#assigned} where they start.
     */
    void startKvAndLoad(Map<Integer, Long> kvFrom, Sink sink);

    /** Whether the membership feed reads now. */
    boolean membershipHealthy();

    /** When the membership feed stopped reading (feed clock), or -1 while it reads. */
    long membershipUnhealthySinceMs();

    /** kv-events records not yet read, as of the last check; -1 unknown. */
    long kvLag();

    /** Stops every feed; a stopped instance may be started again (rebuild). */
    @Override
    void close();
}
