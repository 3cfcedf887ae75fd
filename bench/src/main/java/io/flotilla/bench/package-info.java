/**
 * The Flotilla benchmark: {@code bin/flotilla bench …} ({@link io.flotilla.bench.BenchCli}).
 *
 * <h2>What it sends</h2>
 * Streaming {@code POST {url}/v1/completions} with token-id prompts ({@code "prompt": [ids…]},
 * {@code max_tokens}, {@code stream}, {@code stream_options.include_usage}, {@code ignore_eos},
 * {@code temperature 0}), see {@link io.flotilla.bench.client.CompletionClient}. Workloads:
 * <ul>
 *   <li>{@code --trace FILE}: Mooncake JSONL or Azure LLM inference CSV, streamed row by row; prompts
 *       are expanded only when sent ({@link io.flotilla.bench.workload.TraceWorkload}).</li>
 *   <li>{@code --groups N}: shared-prefix groups ({@link io.flotilla.bench.workload.SharedPrefixWorkload}).</li>
 *   <li>{@code --sessions N}: multi-turn sessions with growing context
 *       ({@link io.flotilla.bench.workload.SessionWorkload}).</li>
 * </ul>
 * Token ids follow one stable, documented rule ({@link io.flotilla.bench.workload.TokenExpander}):
 * Mooncake hash id {@code h} → the first 512 values of {@code new SplittableRandom(h).nextInt(100000)},
 * spelled out as SplitMix64 arithmetic so it does not depend on the JDK.
 * Synthetic arrivals: {@link io.flotilla.bench.workload.ArrivalProcess} (constant, Poisson,
 * on/off-modulated Poisson).
 *
 * <h2>What it measures</h2>
 * Per request, on the client's clock ({@link io.flotilla.bench.client.StreamRecorder}): TTFT to the
 * first content chunk; gaps between content chunks (a chunk may carry several tokens; the pooled
 * {@code itl_ms} is per chunk gap, {@code itl_mean_ms} is per token); end-to-end latency; usage
 * (prompt, cached, completion tokens); the serving worker from {@code x-flotilla-worker} (and
 * {@code x-flotilla-prefill-worker}); the outcome. The oracle hit rate
 * ({@link io.flotilla.bench.stats.OracleHitRate}) is the best any router could reach on the token ids
 * actually sent, with the engines' own rule that the last prompt token is never cached.
 * Percentiles: linear interpolation between closest ranks ({@link io.flotilla.bench.stats.LatencyStats});
 * SLOs: {@link io.flotilla.bench.stats.SloPolicy}.
 *
 * <h2>What it writes</h2>
 * {@code requests.csv}, {@code summary.json}, {@code report.html} (self-contained, inline SVG) per run
 * ({@link io.flotilla.bench.report.ReportWriter}); {@code bench compare} adds {@code compare.md},
 * {@code compare.html} and {@code compare.json} with ratios against round-robin
 * ({@link io.flotilla.bench.report.CompareReport}), after switching the router's mode and clearing every
 * worker's prefix cache before each run ({@link io.flotilla.bench.CompareRun}).
 */
package io.flotilla.bench;
