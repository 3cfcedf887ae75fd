package io.flotilla.protocol.kafka;

import org.apache.kafka.common.utils.Utils;

import java.nio.charset.StandardCharsets;

/**
 * The partition of a topic keyed by worker id that a worker's records land on: Kafka's default partitioner for a
 * keyed record (murmur2 of the serialized key, made positive, modulo the partition count). Indexer shards use it to
 * tell which workers their assigned {@code flotilla.kv-events} partitions hold, the router to tell which shard
 * answers for a worker. It holds as long as producers key by worker id with the default partitioner, as every
 * Flotilla producer does.
 */
public final class WorkerPartitions {

    private WorkerPartitions() {
    }

    /** The partition of {@code workerId}'s records in a topic of {@code partitionCount} partitions. */
    public static int of(String workerId, int partitionCount) {
        if (partitionCount <= 0) {
            throw new IllegalArgumentException("partition count must be positive, was " + partitionCount);
        }
        return Utils.toPositive(Utils.murmur2(workerId.getBytes(StandardCharsets.UTF_8))) % partitionCount;
    }
}
