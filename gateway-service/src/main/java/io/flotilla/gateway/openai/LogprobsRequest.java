package io.flotilla.gateway.openai;

/**
 * Log-probabilities asked for: chat's {@code logprobs: true} with {@code top_logprobs}, or a text
 * completion's {@code logprobs: n}.
 *
 * @param enabled whether each generated token's log-probability is returned
 * @param top     alternatives per token
 */
public record LogprobsRequest(boolean enabled, int top) {

    public static final LogprobsRequest OFF = new LogprobsRequest(false, 0);
}
