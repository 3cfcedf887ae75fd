package io.flotilla.bench.run;

/**
 * One row of {@code requests.csv}, by concern: what was sent and when, how it ended, its timing as the client
 * measured it, the usage the gateway reported, and where it ran.
 */
public record RequestResult(Sent sent, End end, Timing timing, Usage usage, Placement placement) {

    /**
     * What the bench sent. {@code scheduledMs} and {@code sentMs} are milliseconds from the start of the run
     * ({@code sentMs > scheduledMs} when the concurrency cap or the dispatcher delayed the request).
     *
     * @param session            the session of a multi-turn workload, -1 without one
     * @param promptLen          tokens sent in the prompt
     * @param oracleCachedTokens tokens the oracle could serve from cache ({@code OracleHitRate})
     * @param tenant             tenant the request was sent as (empty without {@code --tenants})
     * @param priority           band it was sent with (empty without {@code --priority})
     */
    public record Sent(long id, long session, int turn, double scheduledMs, double sentMs, int promptLen, int maxTokens,
                       int oracleCachedTokens, String tenant, String priority) {
    }

    /**
     * How it ended.
     *
     * @param outcome    {@code ok}, or what went wrong
     * @param httpStatus the gateway's status, 0 without an answer
     * @param errorCode  the OpenAI error {@code code} of a failed request, empty otherwise
     * @param error      the error's text, empty otherwise
     */
    public record End(String outcome, int httpStatus, String errorCode, String error) {

        public boolean ok() {
            return "ok".equals(outcome);
        }
    }

    /**
     * Times in milliseconds, as the client measured them.
     *
     * @param itlMeanMs mean per-token inter-token latency ({@code StreamRecorder})
     * @param chunks    streamed chunks received
     * @param queueMs   time the gateway queued it, NaN when it did not say
     */
    public record Timing(double ttftMs, double e2eMs, double itlMeanMs, double itlMaxMs, int chunks, double queueMs) {
    }

    /**
     * The usage the gateway reported.
     *
     * @param promptTokens     {@code usage.prompt_tokens}, -1 without usage
     * @param cachedTokens     {@code usage.prompt_tokens_details.cached_tokens}, -1 without usage
     * @param completionTokens {@code usage.completion_tokens} (streamed count without usage)
     */
    public record Usage(int promptTokens, int cachedTokens, int completionTokens) {
    }

    /**
     * Where it ran, as the gateway said.
     *
     * @param prefillWorker the prefill worker of a disaggregated request, empty otherwise
     * @param mode          how its worker was chosen ({@code gateway_fallback}: not by a router)
     */
    public record Placement(String worker, String prefillWorker, String mode) {
    }

    public long id() {
        return sent.id();
    }

    public boolean ok() {
        return end.ok();
    }

    /** End of the request, ms from the start of the run. */
    public double endMs() {
        return sent.sentMs() + timing.e2eMs();
    }
}
