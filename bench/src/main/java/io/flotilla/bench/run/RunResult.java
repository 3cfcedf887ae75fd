package io.flotilla.bench.run;

import io.flotilla.bench.stats.LatencyStats;

import java.time.Instant;
import java.util.List;
import java.util.Map;

/**
 * Everything a run measured; reports are computed from it.
 *
 * @param workload          the workload's description
 * @param startedAt         wall-clock start of the run
 * @param durationS         from the start of the run to the end of the last request
 * @param requests          one result per sent request, in send order
 * @param chunkGapsMs       every gap between consecutive content chunks, pooled over ok requests
 * @param oraclePromptTokens prompt tokens sent (oracle denominator)
 * @param oracleCachedTokens prompt tokens the oracle serves from cache
 * @param tokensPerSecond   output tokens received in each second of the run
 * @param finishedPerSecond requests finished in each second of the run
 * @param maxDispatchLagMs  largest delay between a request's scheduled and actual send time
 * @param stopReason        {@code workload-exhausted}, {@code max-requests}, {@code duration} or {@code stopped}
 * @param lruCapacityBlocks capacity of the same-capacity LRU reference, 0 when none ran
 * @param lruCachedTokens   prompt tokens that LRU serves from cache
 * @param tierHitTokens     prompt tokens the workers found per KV tier during the run (device, host, disk;
 *                          from {@code GetKvTierStats} before and after), empty when not read
 * @param engine            the gateway's and the workers' counters over the run, {@link EngineCounts#UNKNOWN} when not read
 */
public record RunResult(String workload, Instant startedAt, double durationS, List<RequestResult> requests,
                        LatencyStats chunkGapsMs, long oraclePromptTokens, long oracleCachedTokens,
                        long[] tokensPerSecond, long[] finishedPerSecond, double maxDispatchLagMs, String stopReason,
                        long lruCapacityBlocks, long lruCachedTokens, Map<String, Long> tierHitTokens,
                        EngineCounts engine) {

    public RunResult {
        tierHitTokens = tierHitTokens == null ? Map.of() : Map.copyOf(tierHitTokens);
        engine = engine == null ? EngineCounts.UNKNOWN : engine;
    }

    public RunResult(String workload, Instant startedAt, double durationS, List<RequestResult> requests,
                     LatencyStats chunkGapsMs, long oraclePromptTokens, long oracleCachedTokens, long[] tokensPerSecond,
                     long[] finishedPerSecond, double maxDispatchLagMs, String stopReason, long lruCapacityBlocks,
                     long lruCachedTokens, Map<String, Long> tierHitTokens) {
        this(workload, startedAt, durationS, requests, chunkGapsMs, oraclePromptTokens, oracleCachedTokens, tokensPerSecond,
                finishedPerSecond, maxDispatchLagMs, stopReason, lruCapacityBlocks, lruCachedTokens, tierHitTokens,
                EngineCounts.UNKNOWN);
    }

    public RunResult(String workload, Instant startedAt, double durationS, List<RequestResult> requests,
                     LatencyStats chunkGapsMs, long oraclePromptTokens, long oracleCachedTokens, long[] tokensPerSecond,
                     long[] finishedPerSecond, double maxDispatchLagMs, String stopReason) {
        this(workload, startedAt, durationS, requests, chunkGapsMs, oraclePromptTokens, oracleCachedTokens, tokensPerSecond,
                finishedPerSecond, maxDispatchLagMs, stopReason, 0, 0, Map.of());
    }

    /** The same run with the workers' per-tier hits. */
    public RunResult withTierHits(Map<String, Long> hits) {
        return new RunResult(workload, startedAt, durationS, requests, chunkGapsMs, oraclePromptTokens, oracleCachedTokens,
                tokensPerSecond, finishedPerSecond, maxDispatchLagMs, stopReason, lruCapacityBlocks, lruCachedTokens, hits,
                engine);
    }

    /** The same run with the cluster's counters over it. */
    public RunResult withEngine(EngineCounts counts) {
        return new RunResult(workload, startedAt, durationS, requests, chunkGapsMs, oraclePromptTokens, oracleCachedTokens,
                tokensPerSecond, finishedPerSecond, maxDispatchLagMs, stopReason, lruCapacityBlocks, lruCachedTokens,
                tierHitTokens, counts);
    }
}
