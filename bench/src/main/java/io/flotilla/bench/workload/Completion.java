package io.flotilla.bench.workload;

/**
 * What a multi-turn workload learns from a finished request.
 *
 * @param ok               the request completed without error
 * @param completionTokens {@code usage.completion_tokens}, or the count of streamed tokens when usage was missing
 * @param outputTokenIds   the generated token ids when the server streamed them ({@code token_ids}),
 *                         otherwise an empty array
 */
public record Completion(boolean ok, int completionTokens, int[] outputTokenIds) {
}
