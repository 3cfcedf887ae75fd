package io.flotilla.protocol.kafka;

import java.util.Map;

/**
 * A Kafka topic Flotilla owns: its name, partition count and topic-level configs.
 *
 * @param name       topic name
 * @param partitions partitions to create with; keys (worker id, request id, …) spread over them
 * @param configs    topic configs applied at creation (cleanup policy, retention, …)
 */
public record Topic(String name, int partitions, Map<String, String> configs) {

    public Topic {
        configs = Map.copyOf(configs);
    }

    /** This topic created with {@code n} partitions instead. */
    public Topic withPartitions(int n) {
        if (n < 1) {
            throw new IllegalArgumentException(name + ": partitions must be positive, was " + n);
        }
        return new Topic(name, n, configs);
    }

    public boolean compacted() {
        return "compact".equals(configs.get("cleanup.policy"));
    }
}
