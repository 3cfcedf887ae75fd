package io.flotilla.planner.core;

import io.flotilla.protocol.v1.PoolObservation;

import java.time.Instant;

/**
 * What one planning interval showed, for one model. Latency and length statistics are over the
 * requests that finished OK in the interval; they are {@code NaN} when there were none.
 *
 * @param end                 end of the interval
 * @param intervalSeconds     its length
 * @param requests            requests that finished in it (any outcome but client error)
 * @param requestRate         requests that arrived in it / intervalSeconds: the finished ones plus the growth of
 *                            the requests in flight on the model's workers ({@code IntervalAggregator})
 * @param islMean             mean prompt length (tokens)
 * @param islP90              90th percentile prompt length
 * @param oslMean             mean output length
 * @param oslP90              90th percentile output length
 * @param cachedMean          mean prompt tokens served from the prefix cache
 * @param ttftP50Ms           median time to first token
 * @param ttftP90Ms           90th percentile time to first token
 * @param itlP50Ms            median inter-token latency (of per-request means)
 * @param itlP90Ms            90th percentile inter-token latency
 * @param latencySamples      requests with a TTFT measurement
 * @param prefillQueueTokens  mean over the interval of the prompt tokens waiting on the prefill-serving pool
 *                            (prefill workers, or aggregated ones without a prefill pool)
 * @param decodeKvUsage       mean KV usage fraction of the decode-serving pool (decode, else aggregated)
 * @param prefillConcurrency  mean running requests per prefill-serving worker
 * @param decodeConcurrency   mean running requests per decode-serving worker
 * @param ready               READY workers per pool at the end of the interval
 */
public record Observation(Instant end, double intervalSeconds, long requests, double requestRate,
                          double islMean, double islP90, double oslMean, double oslP90, double cachedMean,
                          double ttftP50Ms, double ttftP90Ms, double itlP50Ms, double itlP90Ms, long latencySamples,
                          double prefillQueueTokens, double decodeKvUsage,
                          double prefillConcurrency, double decodeConcurrency, PoolCounts ready) {

    /** An interval without requests or load reports. */
    public static Observation idle(Instant end, double intervalSeconds, PoolCounts ready) {
        return new Observation(end, intervalSeconds, 0, 0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, 0, 0, 0, 0, ready);
    }

    /** A steady load with the given shape and no latency measurements (simulations and tests). */
    public static Observation load(Instant end, double intervalSeconds, double rate, double isl, double osl, PoolCounts ready) {
        long n = Math.round(rate * intervalSeconds);
        return new Observation(end, intervalSeconds, n, rate, n > 0 ? isl : Double.NaN, n > 0 ? isl : Double.NaN,
                n > 0 ? osl : Double.NaN, n > 0 ? osl : Double.NaN, n > 0 ? 0 : Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, 0, 0, 0, 0, ready);
    }

    public Observation withLatency(double ttftP90Ms, double itlP90Ms, long samples, double prefillConcurrency,
                                   double decodeConcurrency) {
        return new Observation(end, intervalSeconds, requests, requestRate, islMean, islP90, oslMean, oslP90, cachedMean,
                ttftP90Ms, ttftP90Ms, itlP90Ms, itlP90Ms, samples, prefillQueueTokens, decodeKvUsage,
                prefillConcurrency, decodeConcurrency, ready);
    }

    /** The contract's view of it ({@code PoolObservation}); NaN statistics become 0. */
    public PoolObservation toProto() {
        return PoolObservation.newBuilder().setRequestRate(requestRate).setMeanIsl(finite(islMean))
                .setMeanOsl(finite(oslMean)).setTtftP90Ms(finite(ttftP90Ms)).setItlP90Ms(finite(itlP90Ms))
                .setPrefillQueueTokens(finite(prefillQueueTokens)).setDecodeKvUsage(finite(decodeKvUsage)).build();
    }

    static double finite(double v) {
        return Double.isFinite(v) ? v : 0;
    }
}
