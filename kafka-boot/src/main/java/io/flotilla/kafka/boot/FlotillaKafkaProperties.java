package io.flotilla.kafka.boot;

import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotNull;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

import java.time.Duration;

/**
 * How a service treats its Kafka topics. Clients themselves are configured with Spring Boot's
 * {@code spring.kafka.*} (bootstrap servers, {@code security.protocol}, {@code ssl.*},
 * {@code properties.sasl.*}), which every Flotilla producer, consumer and admin client applies.
 *
 * @param replicationFactor   replication factor of the topics this service creates; unset: the broker's
 *                            {@code default.replication.factor}
 * @param startupCheckTimeout how long start-up waits for Kafka to create or check the topics; a wrong
 *                            cleanup policy found in that time stops the service. Past it the service starts
 *                            anyway, keeps trying in the background and reports Kafka in its health. 0 skips
 *                            the wait (tests without a broker)
 * @param checkInterval       how often the {@code kafka} health component asks the broker
 * @param kvEventsPartitions  partitions flotilla.kv-events is created with when this service creates it (workers do);
 *                            unset: the declared 8. An existing topic keeps its count. The partitions bound how many
 *                            indexer shards get work; set it before the topic exists (adding partitions later moves
 *                            workers to other partitions)
 */
@Validated
@ConfigurationProperties("flotilla.kafka")
public record FlotillaKafkaProperties(
        @Min(1) @Max(Short.MAX_VALUE) Integer replicationFactor,
        @DefaultValue("15s") @NotNull Duration startupCheckTimeout,
        @DefaultValue("5s") @NotNull Duration checkInterval,
        @Min(1) @Max(10_000) Integer kvEventsPartitions) {
}
