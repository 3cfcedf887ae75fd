package io.flotilla.kafka.boot;

import io.flotilla.protocol.kafka.Topic;

import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * What one service does with Kafka, declared as a bean: the topics it writes (created with the configs
 * of {@code Topics} when missing, checked when present), the topics it only reads (checked for
 * existence), and whether it can serve before it has loaded state from Kafka.
 *
 * @param writes      topics this service produces to
 * @param reads       topics this service only consumes
 * @param stateLoaded null when the service serves without Kafka state (gateway, workers); otherwise true
 *                    once it has read its state at least once: until then the {@code kafkaState}
 *                    component, which the readiness group includes, is down
 * @param feeds       the service's own consumers: feed name → why it cannot read ("" while it reads)
 */
public record KafkaTopicUse(List<Topic> writes, List<Topic> reads, BooleanSupplier stateLoaded,
                            Supplier<Map<String, String>> feeds) {

    public KafkaTopicUse {
        writes = List.copyOf(writes);
        reads = List.copyOf(reads);
        feeds = feeds == null ? Map::of : feeds;
    }

    /** A service that only produces and never needs Kafka state to serve. */
    public static KafkaTopicUse producerOnly(List<Topic> writes) {
        return new KafkaTopicUse(writes, List.of(), null, Map::of);
    }
}
