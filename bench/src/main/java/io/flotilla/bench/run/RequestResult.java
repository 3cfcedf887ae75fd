package io.flotilla.bench.run;

/**
 * One row of {@code requests.csv}. Times are milliseconds; {@code scheduledMs} and {@code sentMs} count
 * from the start of the run ({@code sentMs > scheduledMs} when the concurrency cap or the dispatcher
 * delayed the request).
 *
 * @param promptLen          tokens sent in the prompt
 * @param oracleCachedTokens tokens the oracle could serve from cache ({@code OracleHitRate})
 * @param promptTokens       {@code usage.prompt_tokens}, -1 without usage
 * @param cachedTokens       {@code usage.prompt_tokens_details.cached_tokens}, -1 without usage
 * @param completionTokens   {@code usage.completion_tokens} (streamed count without usage)
 * @param itlMeanMs          mean per-token inter-token latency ({@code StreamRecorder})
 * @param tenant             tenant the request was sent as (empty without {@code --tenants})
 * @param priority           band it was sent with (empty without {@code --priority})
 * @param queueMs            time the gateway queued it, NaN when it did not say
 * @param mode               how its worker was chosen, as the gateway said ({@code gateway_fallback}: not by a router)
 * @param errorCode          the OpenAI error {@code code} of a failed request, empty otherwise
 */
public record RequestResult(long id, long session, int turn, double scheduledMs, double sentMs, int promptLen,
                            int maxTokens, int oracleCachedTokens, String outcome, int httpStatus, String error,
                            double ttftMs, double e2eMs, double itlMeanMs, double itlMaxMs, int chunks,
                            int promptTokens, int cachedTokens, int completionTokens, String worker,
                            String prefillWorker, String tenant, String priority, double queueMs, String mode,
                            String errorCode) {

    public boolean ok() {
        return "ok".equals(outcome);
    }

    /** End of the request, ms from the start of the run. */
    public double endMs() {
        return sentMs + e2eMs;
    }
}
