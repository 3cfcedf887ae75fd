package io.flotilla.gateway.openai;

import io.flotilla.gateway.tokenize.ChatMessage;

import java.util.List;

/**
 * A validated generation request, as the client stated it (before tokenization and model lookup).
 * Exactly one of {@code messages} (chat), {@code promptText} or {@code promptTokens} (text) is set.
 *
 * @param kind         chat or text completion
 * @param model        model name; null when the request named none
 * @param messages     chat conversation
 * @param promptText   text prompt
 * @param promptTokens token-id prompt
 * @param maxTokens    output token limit; null when not given
 * @param stop         stop strings (empty when none)
 * @param temperature  sampling temperature in [0, 2]
 * @param topP         nucleus sampling mass in (0, 1]
 * @param seed         sampling seed; null when not given
 * @param ignoreEos    keep generating past end-of-sequence (vLLM extension)
 * @param user         end-user / tenant id; null when not given
 * @param stream       answer as server-sent events
 * @param includeUsage with {@code stream}: a last chunk with usage
 */
public record CompletionRequest(CompletionKind kind, String model, List<ChatMessage> messages, String promptText,
                                int[] promptTokens, Integer maxTokens, List<String> stop, double temperature,
                                double topP, Long seed, boolean ignoreEos, String user, boolean stream,
                                boolean includeUsage) {
}
