package io.flotilla.boot.ops;

import io.flotilla.kafka.boot.KafkaFeeds;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.kafka.KafkaClientMetrics;
import org.apache.kafka.clients.producer.Producer;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;

/**
 * Kafka's own client metrics on {@code /actuator/prometheus} ({@code kafka_producer_*}, {@code kafka_consumer_*},
 * tagged with the client id): every {@link Producer} bean through Micrometer's {@link KafkaClientMetrics}, and the
 * consumer of every feed a {@link KafkaFeeds} bean is given.
 */
final class KafkaClientMeters implements BeanPostProcessor {

    private final ObjectProvider<MeterRegistry> registry;

    KafkaClientMeters(ObjectProvider<MeterRegistry> registry) {
        this.registry = registry;
    }

    @Override
    public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof Producer<?, ?> producer) {
            registry.ifAvailable(r -> new KafkaClientMetrics(producer).bindTo(r));
        } else if (bean instanceof KafkaFeeds feeds) {
            registry.ifAvailable(feeds::bindMetrics);
        }
        return bean;
    }
}
