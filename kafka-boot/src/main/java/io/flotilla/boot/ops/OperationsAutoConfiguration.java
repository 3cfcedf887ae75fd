package io.flotilla.boot.ops;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * What every service's operators get alike: the actuator's write operations guarded ({@link ActuatorWriteGuard}),
 * Kafka's client metrics ({@link KafkaClientMeters}).
 * Tracing comes from Spring Boot itself (this module brings the OpenTelemetry bridge and the Zipkin exporter); each
 * service's gRPC servers and channels add Micrometer's observation interceptors.
 */
@AutoConfiguration
@EnableConfigurationProperties(ActuatorProperties.class)
public class OperationsAutoConfiguration {

    /** Static: a post-processor is made before the beans it processes. */
    @Bean
    static KafkaClientMeters kafkaClientMeters(ObjectProvider<MeterRegistry> registry) {
        return new KafkaClientMeters(registry);
    }

    @Bean
    @ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.REACTIVE)
    ActuatorWriteGuard actuatorWriteGuard(ActuatorProperties properties, Environment environment) {
        return new ActuatorWriteGuard(environment.getProperty("management.endpoints.web.base-path", "/actuator"),
                properties.writeKey());
    }
}
