package io.flotilla.gateway.api;

import io.flotilla.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.databind.json.JsonMapper;

/** The HTTP API's cross-cutting pieces: OpenAI error rendering, API keys, per-key rate limits. */
@Configuration(proxyBeanMethods = false)
class WebConfig {

    @Bean
    ApiErrorHandler apiErrorHandler(JsonMapper json) {
        return new ApiErrorHandler(json);
    }

    @Bean
    ApiKeys apiKeys(GatewayProperties properties) {
        return ApiKeys.load(properties.auth().apiKeys(), properties.auth().apiKeysFile());
    }

    @Bean
    ApiKeyFilter apiKeyFilter(ApiKeys keys) {
        return new ApiKeyFilter(keys);
    }

    @Bean
    RateLimitFilter rateLimitFilter(GatewayProperties properties) {
        return new RateLimitFilter(properties.rateLimit().requestsPerPeriod(), properties.rateLimit().period());
    }
}
