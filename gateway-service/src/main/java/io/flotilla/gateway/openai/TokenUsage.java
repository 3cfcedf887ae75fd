package io.flotilla.gateway.openai;

/**
 * Token accounting of one request as reported to the client.
 *
 * @param promptTokens     tokens of the prompt the client sent (after the chat template), counted once
 *                         whatever n is
 * @param completionTokens tokens generated for the client, over every choice and every worker the
 *                         request ran on
 * @param cachedTokens     prompt tokens the serving worker found in its KV cache
 * @param reasoningTokens  generated tokens that went to reasoning (0 without a reasoning parser)
 */
public record TokenUsage(int promptTokens, int completionTokens, int cachedTokens, int reasoningTokens) {

    public TokenUsage(int promptTokens, int completionTokens, int cachedTokens) {
        this(promptTokens, completionTokens, cachedTokens, 0);
    }

    public int totalTokens() {
        return promptTokens + completionTokens;
    }
}
