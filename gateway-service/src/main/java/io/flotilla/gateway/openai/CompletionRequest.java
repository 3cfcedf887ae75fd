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
 * @param maxTokens    output token limit per choice; null when not given
 * @param stop         stop strings (empty when none)
 * @param sampling     sampling parameters
 * @param n            choices to generate (1 … 128)
 * @param user         end-user / tenant id; null when not given
 * @param stream       answer as server-sent events
 * @param includeUsage with {@code stream}: a last chunk with usage
 * @param tools        tools and tool choice (chat; {@link ToolsRequest#NONE} otherwise)
 * @param format       {@code response_format} (chat; text otherwise)
 * @param logprobs     log-probabilities to return
 */
public record CompletionRequest(CompletionKind kind, String model, List<ChatMessage> messages, String promptText,
                                int[] promptTokens, Integer maxTokens, List<String> stop, SamplingRequest sampling, int n,
                                String user, boolean stream, boolean includeUsage, ToolsRequest tools, OutputFormat format,
                                LogprobsRequest logprobs) {
}
