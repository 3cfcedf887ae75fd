package io.flotilla.gateway.responses;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * The meters of {@code /v1/responses} beyond those every endpoint has (requests, latency, tokens by
 * {@code endpoint}): the store's operations, and how follow-ups ({@code previous_response_id}) were placed —
 * on the worker of the previous turn or moved — with their prompt and cached tokens, so the hit rate of a
 * conversation's KV is {@code cached / prompt}.
 */
public final class ResponsesMetrics {

    private final MeterRegistry registry;

    public ResponsesMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** A store operation: {@code put}, {@code get} or {@code delete}; outcome {@code ok}, {@code missing} or {@code failed}. */
    public void store(String operation, String outcome) {
        Counter.builder("flotilla.gateway.responses.store")
                .description("Operations on the stored responses")
                .tag("operation", operation).tag("outcome", outcome)
                .register(registry).increment();
    }

    /**
     * A follow-up turn answered.
     *
     * @param outcome {@code same_worker} (the previous turn's worker served it) or {@code moved}
     */
    public void followup(String model, String outcome, int promptTokens, int cachedTokens) {
        Counter.builder("flotilla.gateway.responses.followups")
                .description("Responses continuing a stored one, by where they ran")
                .tag("model", model).tag("outcome", outcome).register(registry).increment();
        Counter.builder("flotilla.gateway.responses.followup.prompt.tokens")
                .description("Prompt tokens of follow-up responses")
                .tag("model", model).register(registry).increment(promptTokens);
        Counter.builder("flotilla.gateway.responses.followup.cached.tokens")
                .description("Prompt tokens of follow-up responses found in the worker's KV cache")
                .tag("model", model).register(registry).increment(cachedTokens);
    }
}
