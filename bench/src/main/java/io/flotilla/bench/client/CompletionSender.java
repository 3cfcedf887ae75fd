package io.flotilla.bench.client;

import java.util.concurrent.CompletableFuture;

/** Sends one streaming completion; the port between the load generator and HTTP. */
public interface CompletionSender {

    /**
     * Sends {@code prompt} asking for {@code maxTokens} tokens, feeding the stream into {@code recorder}.
     * The future completes normally, with the measurement, whatever happens to the request (including
     * {@link StreamRecorder#abort()}).
     */
    CompletableFuture<StreamMeasurement> send(int[] prompt, int maxTokens, StreamRecorder recorder);

    /** As {@link #send(int[], int, StreamRecorder)}, sent as {@code labels} say (tenant, API key, priority). */
    default CompletableFuture<StreamMeasurement> send(int[] prompt, int maxTokens, StreamRecorder recorder,
                                                      io.flotilla.bench.run.RequestLabels labels) {
        return send(prompt, maxTokens, recorder);
    }
}
