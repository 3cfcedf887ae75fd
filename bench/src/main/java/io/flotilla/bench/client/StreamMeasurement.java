package io.flotilla.bench.client;

/**
 * What the client measured for one request ({@link StreamRecorder} defines each field).
 *
 * @param outcome        {@code ok}, {@code http_<status>}, {@code error} (error event in the stream),
 *                       {@code incomplete} (stream closed without {@code [DONE]} or usage),
 *                       {@code timeout}, {@code cancelled} (run stopped) or {@code io_error}
 * @param httpStatus     response status, 0 when none arrived
 * @param error          human-readable reason when not ok
 * @param ttftMs         time to first content chunk, NaN when none arrived
 * @param e2eMs          time to the end of the response
 * @param itlMeanMs      mean inter-token latency per token, NaN with fewer than two content chunks
 * @param itlMaxMs       longest gap between content chunks, NaN with fewer than two
 * @param gapsMs         gaps between consecutive content chunks
 * @param chunks         content chunks received
 * @param streamedTokens tokens counted in the stream (token_ids lengths, else one per content chunk)
 * @param usage          the final usage, or null when the server sent none
 * @param worker         {@code x-flotilla-worker}, empty when absent
 * @param prefillWorker  {@code x-flotilla-prefill-worker}, empty when absent
 * @param outputTokenIds generated ids when streamed and asked for, else empty
 * @param queueMs        {@code x-flotilla-queue-ms}: time the gateway queued the request, NaN when absent
 * @param mode           {@code x-flotilla-mode}: how the worker was chosen, empty when absent
 * @param errorCode      the OpenAI error body's {@code code} of a failed request, empty when none
 */
public record StreamMeasurement(String outcome, int httpStatus, String error, double ttftMs, double e2eMs,
                                double itlMeanMs, double itlMaxMs, float[] gapsMs, int chunks, int streamedTokens,
                                StreamEvent.Usage usage, String worker, String prefillWorker, int[] outputTokenIds,
                                double queueMs, String mode, String errorCode) {

    public boolean ok() {
        return "ok".equals(outcome);
    }

    /** {@code usage.completion_tokens}, or the streamed token count when usage is missing. */
    public int completionTokens() {
        return usage != null ? usage.completionTokens() : streamedTokens;
    }
}
