package io.flotilla.kafka.boot;

import org.apache.kafka.clients.CommonClientConfigs;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The settings every Kafka client of a service is built from, derived once from Spring Boot's
 * {@code KafkaProperties} ({@code buildProducerProperties()} and friends), so {@code spring.kafka.*}
 * (security included) reaches every producer, consumer and admin client alike.
 *
 * @param producer settings for producers
 * @param consumer settings for consumers
 * @param admin    settings for admin clients
 */
public record KafkaClients(Map<String, Object> producer, Map<String, Object> consumer, Map<String, Object> admin) {

    public KafkaClients {
        producer = Map.copyOf(producer);
        consumer = Map.copyOf(consumer);
        admin = Map.copyOf(admin);
    }

    /** The bootstrap servers, as configured (for health details and logs). */
    public String bootstrapServers() {
        Object servers = admin.get(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG);
        return servers instanceof List<?> l ? String.join(",", l.stream().map(Object::toString).toList())
                : Objects.toString(servers, "");
    }

    /** {@code security.protocol}, {@code PLAINTEXT} when unset. */
    public String securityProtocol() {
        return Objects.toString(admin.get(CommonClientConfigs.SECURITY_PROTOCOL_CONFIG), "PLAINTEXT");
    }
}
