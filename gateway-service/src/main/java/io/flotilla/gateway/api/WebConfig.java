package io.flotilla.gateway.api;

import io.flotilla.gateway.config.GatewayProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import io.flotilla.gateway.limits.KeyRateLimits;
import io.flotilla.gateway.limits.LimitConditions;
import io.flotilla.gateway.metrics.TenantMetrics;
import io.flotilla.gateway.client.RouterClient;
import io.flotilla.gateway.flow.FlowController;
import io.flotilla.gateway.flow.FlowPolicy;
import io.flotilla.gateway.flow.PrefixMemory;
import io.flotilla.gateway.generation.JobFactory;
import io.flotilla.gateway.generation.RequestAccounting;
import io.flotilla.gateway.routing.CapacityWatch;
import reactor.core.scheduler.Scheduler;
import tools.jackson.databind.json.JsonMapper;

import java.time.Clock;

/**
 * The HTTP API's cross-cutting pieces: error rendering (OpenAI's shape, Anthropic's on /v1/messages), body reading,
 * the generation endpoints' intake, API keys, per-key rate limits, /actuator/flow.
 */
@Configuration(proxyBeanMethods = false)
class WebConfig {

    @Bean
    ApiErrorHandler apiErrorHandler(JsonMapper json) {
        return new ApiErrorHandler(json);
    }

    /**
     * OpenAI error bodies on the errors Netty answers before WebFlux sees the request ({@link ErrorBodies});
     * the header limit itself is {@code server.max-http-request-header-size}, which application.yml sets
     * from {@code flotilla.gateway.max-header-size}.
     */
    @Bean
    org.springframework.boot.reactor.netty.NettyServerCustomizer httpLimits(GatewayProperties properties, JsonMapper json) {
        int maxHeader = (int) Math.min(Integer.MAX_VALUE, properties.maxHeaderSize().toBytes());
        return server -> server.doOnChannelInit((observer, channel, address) -> {
                    if (channel.pipeline().get(reactor.netty.NettyPipeline.HttpCodec) != null) {
                        channel.pipeline().addAfter(reactor.netty.NettyPipeline.HttpCodec, ErrorBodies.NAME,
                                new ErrorBodies(json, maxHeader));
                    }
                });
    }

    @Bean
    RequestBodies requestBodies(JsonMapper json, GatewayProperties properties, Scheduler prepareScheduler) {
        return new RequestBodies(json, (int) Math.min(Integer.MAX_VALUE, properties.maxRequestSize().toBytes()),
                (int) Math.min(Integer.MAX_VALUE, properties.prepare().inlineBytes().toBytes()), prepareScheduler);
    }

    @Bean
    GenerationIntake generationIntake(RequestBodies bodies, JobFactory jobs, FlowController flow, FlowPolicy policy,
                                      PrefixMemory prefixes, RequestAccounting accounting, Clock clock) {
        return new GenerationIntake(bodies, jobs, flow, policy, prefixes, accounting, clock);
    }

    @Bean
    FlowEndpoint flowEndpoint(FlowController flow, CapacityWatch watch, RouterClient router) {
        return new FlowEndpoint(flow, watch, router);
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
    @Conditional(LimitConditions.RateLimit.class)
    RateLimitFilter rateLimitFilter(KeyRateLimits limits, TenantMetrics tenants, Clock clock) {
        return new RateLimitFilter(limits, tenants, clock);
    }
}
