package io.flotilla.gateway.output;

import io.flotilla.gateway.toolcall.ToolCalls;

import java.util.List;

/**
 * One choice of a non-streamed response.
 *
 * @param content   the answer's text; null when the answer is tool calls only
 * @param reasoning the reasoning text, or null when the model has no reasoning parser
 * @param toolCalls the calls, empty when none
 * @param logprobs  one per generated token when asked for, else null
 */
public record ChoiceResult(int index, String content, String reasoning, List<ToolCalls.Call> toolCalls,
                           List<TokenLogprob> logprobs, String finishReason) {
}
