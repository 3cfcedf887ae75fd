package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.CompletionRequest;

/**
 * A validated {@code /v1/messages} request: the chat request the generation pipeline serves (chat
 * template, tools through the model's tool-call parser, stop sequences as stop strings) and what only
 * the Messages API has.
 *
 * @param completion the same internal request {@code /v1/chat/completions} builds
 * @param thinking   what the client said about extended thinking
 */
public record MessagesRequest(CompletionRequest completion, Thinking thinking) {

    /** {@code thinking.type}: how much the client wants the model to think. */
    public enum Thinking {
        /** No {@code thinking}: a reasoning model's thinking comes back as thinking blocks, as its template produces it. */
        UNSET,
        /** {@code adaptive}: the model decides how much to think; needs a model with a reasoning parser. */
        ADAPTIVE,
        /** {@code disabled}: needs a model that does not reason (nothing here can turn a model's thinking off). */
        DISABLED
    }
}
