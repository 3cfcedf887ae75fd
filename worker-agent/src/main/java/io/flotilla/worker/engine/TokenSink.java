package io.flotilla.worker.engine;

import io.flotilla.protocol.v1.FinishReason;

/**
 * Receives one request's output. Calls for one request never overlap and arrive in order: zero or
 * more {@link #onTokens}, then exactly one of {@link #onFinish} or {@link #onError}. Callbacks run
 * on an engine thread and must not block (see {@link Engine}). A callback that throws is treated as
 * a gone client: the request is cancelled and the sink hears nothing more.
 */
public interface TokenSink {

    /** Newly generated token ids (one step's worth, usually one token). The array is the sink's. */
    void onTokens(int[] tokens);

    /**
     * Newly generated token ids with their log-probabilities, one per token, when the request asked
     * for them ({@link SamplingOptions#logprobs()}); engines call this instead of {@link #onTokens(int[])}.
     */
    default void onTokens(int[] tokens, TokenLogprob[] logprobs) {
        onTokens(tokens);
    }

    /**
     * The request ended normally or was cancelled.
     *
     * @param promptTokens     prompt length
     * @param cachedTokens     prompt tokens whose KV was already resident when it was first scheduled
     * @param completionTokens tokens generated, including a stop token that ended the request
     */
    void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens);

    /**
     * The request failed after it was accepted: {@link DeadlineExceededException} when its deadline
     * passed, {@link EngineUnavailableException} when the engine closed.
     */
    void onError(Throwable error);
}
