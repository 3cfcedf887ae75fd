package io.flotilla.planner.model;

/**
 * How fast one replica of an engine is, measured (by {@code ProfileCli}) or derived (by
 * {@link SimulatedEngineProfile}). Both tables are latencies as functions of load, so the throughput
 * at any latency target can be read off them ({@link PerformanceModel}).
 *
 * @param name           what was profiled
 * @param prefillTtftMs  rows: prompt tokens computed per request (uncached ISL); columns: concurrent
 *                       prefill requests per replica; value: TTFT in ms (p90 when measured)
 * @param decodeItlMs    rows: context length in tokens (prompt + tokens generated so far); columns:
 *                       concurrent decoding requests per replica; value: ITL in ms
 * @param kvTokens       KV cache capacity of one replica in tokens (blocks × block size): concurrency ×
 *                       context never exceeds it
 * @param maxConcurrency most requests one replica runs at once
 */
public record PerformanceProfile(String name, Table2D prefillTtftMs, Table2D decodeItlMs, long kvTokens, int maxConcurrency) {

    public PerformanceProfile {
        if (kvTokens < 1 || maxConcurrency < 1) {
            throw new IllegalArgumentException("kvTokens and maxConcurrency must be positive");
        }
    }
}
