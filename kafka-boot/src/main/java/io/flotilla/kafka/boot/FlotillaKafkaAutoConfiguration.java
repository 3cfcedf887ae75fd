package io.flotilla.kafka.boot;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.kafka.autoconfigure.KafkaAutoConfiguration;
import org.springframework.boot.kafka.autoconfigure.KafkaProperties;
import org.springframework.context.annotation.Bean;

import java.time.Clock;

/**
 * Kafka as every Flotilla service uses it:
 * <ul>
 *   <li>{@link KafkaClients}: producer, consumer and admin settings from Boot's {@link KafkaProperties},
 *       so {@code spring.kafka.*} (security included) reaches every client the service builds;</li>
 *   <li>{@link KafkaStatus}: the topics the service declares in its {@link KafkaTopicUse} bean created or
 *       checked at start-up, and the broker asked every {@code flotilla.kafka.check-interval};</li>
 *   <li>health component {@code kafka}: DOWN with the failure (authentication, unreachable, missing topic,
 *       topic config) in its details. It is not in the readiness group: a gateway or worker keeps serving
 *       without Kafka;</li>
 *   <li>health component {@code kafkaState} (services whose {@link KafkaTopicUse#stateLoaded()} is set):
 *       DOWN until the service has loaded its state from Kafka once, then UP for good. Each such service's
 *       readiness group includes it, so a first start without Kafka is not ready, while a later Kafka
 *       outage does not take a service with state out of rotation.</li>
 * </ul>
 */
@AutoConfiguration(after = KafkaAutoConfiguration.class)
@EnableConfigurationProperties(FlotillaKafkaProperties.class)
public class FlotillaKafkaAutoConfiguration {

    @Bean
    KafkaClients flotillaKafkaClients(KafkaProperties properties) {
        return new KafkaClients(properties.buildProducerProperties(), properties.buildConsumerProperties(),
                properties.buildAdminProperties());
    }

    @Bean(initMethod = "start", destroyMethod = "close")
    @ConditionalOnBean(KafkaTopicUse.class)
    KafkaStatus flotillaKafkaStatus(KafkaClients clients, KafkaTopicUse use, FlotillaKafkaProperties properties,
                                    ObjectProvider<Clock> clock) {
        return new KafkaStatus(clients, use, properties, clock.getIfAvailable(Clock::systemUTC));
    }

    @Bean
    @ConditionalOnBean(KafkaStatus.class)
    HealthIndicator kafkaHealthIndicator(KafkaStatus status) {
        return () -> {
            KafkaStatus.Report r = status.report();
            return (r.up() ? Health.up() : Health.down()).withDetails(r.details()).build();
        };
    }

    @Bean
    @ConditionalOnBean(KafkaStatus.class)
    HealthIndicator kafkaStateHealthIndicator(KafkaStatus status) {
        return () -> {
            if (status.stateLoaded()) {
                return Health.up().withDetail("stateLoaded", true).build();
            }
            KafkaStatus.Report r = status.report();
            return Health.outOfService().withDetail("stateLoaded", false)
                    .withDetail("waitingFor", r.problem().isEmpty() ? "the first full read of the service's topics"
                            : r.problem()).build();
        };
    }
}
