package io.flotilla.gateway.metrics;

import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.gateway.tokenize.ChatPromptCache;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

import java.time.Duration;
import java.util.function.ToDoubleFunction;

/**
 * The gateway's meters (Prometheus names):
 * <ul>
 *   <li>{@code flotilla_gateway_requests_total{model,endpoint,outcome}} — finished requests by endpoint (the
 *       path: {@code /v1/chat/completions}, {@code /v1/completions}, {@code /v1/messages}) and outcome (ok,
 *       client_error, rejected, cancelled, failed, timeout)</li>
 *   <li>{@code flotilla_gateway_ttft_seconds{model}}, {@code flotilla_gateway_itl_seconds{model}} (mean
 *       inter-token latency of one request), {@code flotilla_gateway_e2e_seconds{model}} — timers with
 *       percentile histograms</li>
 *   <li>{@code flotilla_gateway_routed_total{model,mode}} — attempts by how their worker was chosen (the
 *       router's mode, or {@code gateway_fallback})</li>
 *   <li>{@code flotilla_gateway_route_seconds{router,outcome}} — Route attempts (answered, timeout,
 *       unavailable, error), and {@code flotilla_gateway_route_deadline_seconds}, the current deadline</li>
 *   <li>{@code flotilla_gateway_migrations_total{model}}, {@code flotilla_gateway_cached_tokens_total{model}}</li>
 *   <li>{@code flotilla_gateway_records_dropped_total}, {@code flotilla_gateway_records_failed_total}</li>
 *   <li>{@code flotilla_gateway_prompt_cache_requests_total{outcome}} (hit, miss, fallback),
 *       {@code flotilla_gateway_prompt_cache_reused_tokens_total}, {@code flotilla_gateway_prompt_cache_tokens},
 *       {@code _bytes}, {@code _entries} — the chat-prompt cache</li>
 *   <li>{@code flotilla_gateway_tool_calls_total{model}}, {@code flotilla_gateway_tool_calls_malformed_total{model}}
 *       (answers whose calls were not well formed and went out as content),
 *       {@code flotilla_gateway_reasoning_tokens_total{model}}</li>
 * </ul>
 * The model tag only ever holds served model names (or {@code unknown}), so it stays bounded.
 */
public final class GatewayMetrics {

    public static final String UNKNOWN_MODEL = "unknown";

    private final MeterRegistry registry;

    public GatewayMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A counter whose count is kept elsewhere (e.g. records dropped by the publisher). */
    public <T> void functionCounter(String name, String description, T source, ToDoubleFunction<T> count) {
        FunctionCounter.builder(name, source, count).description(description).register(registry);
    }

    /**
     * The chat-prompt cache: {@code flotilla_gateway_prompt_cache_requests_total{outcome=hit|miss|fallback}},
     * {@code flotilla_gateway_prompt_cache_reused_tokens_total} and the gauges
     * {@code flotilla_gateway_prompt_cache_tokens}, {@code _bytes} and {@code _entries}.
     */
    public void promptCache(ChatPromptCache cache) {
        FunctionCounter.builder("flotilla.gateway.prompt.cache.requests", cache, ChatPromptCache::hits)
                .description("Chat prompts whose history came from the prompt cache").tag("outcome", "hit").register(registry);
        FunctionCounter.builder("flotilla.gateway.prompt.cache.requests", cache, ChatPromptCache::misses)
                .description("Chat prompts whose history came from the prompt cache").tag("outcome", "miss").register(registry);
        FunctionCounter.builder("flotilla.gateway.prompt.cache.requests", cache, ChatPromptCache::fallbacks)
                .description("Chat prompts whose history came from the prompt cache").tag("outcome", "fallback")
                .register(registry);
        FunctionCounter.builder("flotilla.gateway.prompt.cache.reused.tokens", cache, ChatPromptCache::reusedTokens)
                .description("Prompt tokens taken from the prompt cache instead of tokenized").register(registry);
        Gauge.builder("flotilla.gateway.prompt.cache.tokens", cache, ChatPromptCache::tokens)
                .description("Token ids kept by the prompt cache").register(registry);
        Gauge.builder("flotilla.gateway.prompt.cache.bytes", cache, ChatPromptCache::bytes)
                .description("Memory of the ids and hashes kept by the prompt cache").baseUnit("bytes").register(registry);
        Gauge.builder("flotilla.gateway.prompt.cache.entries", cache, ChatPromptCache::size)
                .description("Message lists kept by the prompt cache").register(registry);
    }

    public void finished(String model, String endpoint, String outcome) {
        Counter.builder("flotilla.gateway.requests")
                .description("Finished requests by endpoint and outcome")
                .tag("model", model).tag("endpoint", endpoint).tag("outcome", outcome)
                .register(registry).increment();
    }

    /** One embeddings request served: its inputs and their tokens. */
    public void embedded(String model, int inputs, int tokens) {
        Counter.builder("flotilla.gateway.embedding.inputs")
                .description("Inputs embedded (one vector each)")
                .tag("model", model).register(registry).increment(inputs);
        Counter.builder("flotilla.gateway.embedding.tokens")
                .description("Tokens of the inputs embedded")
                .tag("model", model).register(registry).increment(tokens);
    }

    public void ttft(String model, Duration d) {
        timer("flotilla.gateway.ttft", "Time to first token", model).record(d);
    }

    public void itl(String model, Duration d) {
        timer("flotilla.gateway.itl", "Mean inter-token latency of a request", model).record(d);
    }

    public void e2e(String model, Duration d) {
        timer("flotilla.gateway.e2e", "Request latency, arrival to last byte", model).record(d);
    }

    public void migration(String model) {
        Counter.builder("flotilla.gateway.migrations")
                .description("Requests moved to another worker after a worker failure")
                .tag("model", model).register(registry).increment();
    }

    public void cachedTokens(String model, int tokens) {
        Counter.builder("flotilla.gateway.cached.tokens")
                .description("Prompt tokens served from a worker's KV cache")
                .tag("model", model).register(registry).increment(tokens);
    }

    /** What the output parse found in one response. */
    public void output(String model, int toolCalls, int malformedToolOutputs, int reasoningTokens) {
        if (toolCalls > 0) {
            Counter.builder("flotilla.gateway.tool.calls").description("Tool calls parsed from model output")
                    .tag("model", model).register(registry).increment(toolCalls);
        }
        if (malformedToolOutputs > 0) {
            Counter.builder("flotilla.gateway.tool.calls.malformed")
                    .description("Answers whose tool calls were not well formed and were returned as plain content")
                    .tag("model", model).register(registry).increment(malformedToolOutputs);
        }
        if (reasoningTokens > 0) {
            Counter.builder("flotilla.gateway.reasoning.tokens").description("Generated tokens that were reasoning")
                    .tag("model", model).register(registry).increment(reasoningTokens);
        }
    }

    /**
     * One finished KV-routed request: the route's predicted overlap against the worker's cached tokens, to the
     * block ({@code exact}, {@code over}: the worker reused fewer blocks than predicted, {@code under}: more).
     */
    public void overlapPrediction(String model, String result) {
        Counter.builder("flotilla.gateway.overlap.predictions")
                .description("KV-routed requests by how the router's predicted overlap compared with the worker's cached tokens")
                .tag("model", model).tag("result", result).register(registry).increment();
    }

    public void routed(String model, RoutingMode mode) {
        Counter.builder("flotilla.gateway.routed")
                .description("Attempts by how their worker was chosen")
                .tag("model", model).tag("mode", modeTag(mode)).register(registry).increment();
    }

    /** {@code kv}, {@code load}, …, {@code gateway_fallback}; {@code unknown} when unset. */
    public static String modeTag(RoutingMode mode) {
        return mode == null || mode == RoutingMode.ROUTING_MODE_UNSPECIFIED || mode == RoutingMode.UNRECOGNIZED ? "unknown"
                : mode.name().substring("ROUTING_MODE_".length()).toLowerCase(java.util.Locale.ROOT);
    }

    /** One Route attempt on router replica {@code router}. */
    public void routeAttempt(int router, String outcome, long nanos) {
        Timer.builder("flotilla.gateway.route")
                .description("Route attempts from call to answer or give-up, by router replica and outcome")
                .tag("router", Integer.toString(router)).tag("outcome", outcome)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofSeconds(10))
                .register(registry).record(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
    }

    public <T> void gauge(String name, String description, T source, java.util.function.ToDoubleFunction<T> value) {
        Gauge.builder(name, source, value).description(description).register(registry);
    }

    private Timer timer(String name, String description, String model) {
        return Timer.builder(name)
                .description(description)
                .tag("model", model)
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofMillis(1))
                .maximumExpectedValue(Duration.ofMinutes(10))
                .register(registry);
    }
}
