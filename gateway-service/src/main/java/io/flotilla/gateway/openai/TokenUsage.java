package io.flotilla.gateway.openai;

/**
 * Token accounting of one request as reported to the client.
 *
 * @param promptTokens     tokens of the prompt the client sent (after the chat template)
 * @param completionTokens tokens generated for the client, across every worker the request ran on
 * @param cachedTokens     prompt tokens the serving worker found in its KV cache
 */
public record TokenUsage(int promptTokens, int completionTokens, int cachedTokens) {

    public int totalTokens() {
        return promptTokens + completionTokens;
    }
}
