package io.flotilla.gateway.responses;

import io.flotilla.gateway.config.GatewayProperties;
import io.flotilla.gateway.limits.LimitStore;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;

/** The store of {@code /v1/responses}: the shared Redis when the limits have one, else this gateway's memory. */
@Configuration(proxyBeanMethods = false)
class ResponsesConfig {

    @Bean
    ResponseStore responseStore(GatewayProperties properties, ObjectProvider<LimitStore> shared, JsonMapper json,
                                Clock clock) {
        GatewayProperties.Responses r = properties.responses();
        LimitStore store = shared.getIfAvailable();
        return store != null
                ? new RedisResponseStore(store, json, properties.limits().keyPrefix(), r.ttl(), r.maxBytes().toBytes())
                : new MemoryResponseStore(r.maxResponses(), r.ttl(), clock);
    }

    @Bean
    ResponsesMetrics responsesMetrics(MeterRegistry registry) {
        return new ResponsesMetrics(registry);
    }
}
