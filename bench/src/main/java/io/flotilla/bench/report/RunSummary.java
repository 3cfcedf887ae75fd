package io.flotilla.bench.report;

import io.flotilla.bench.run.RequestResult;
import io.flotilla.bench.run.RunContext;
import io.flotilla.bench.run.RunResult;
import io.flotilla.bench.stats.LatencyStats;
import io.flotilla.bench.stats.SloPolicy;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The numbers of one run ({@code summary.json}). Latency distributions cover ok requests:
 * {@code ttft_ms}, {@code e2e_ms}, {@code itl_ms} (every gap between consecutive content chunks,
 * pooled) and {@code itl_mean_ms} (each request's mean per-token ITL). Rates divide by the run
 * duration (start of the run to the end of the last request). {@code cache_hit_rate} = Σ
 * {@code cached_tokens} / Σ {@code prompt_tokens} over requests that reported usage;
 * {@code oracle_hit_rate} is {@code OracleHitRate} over every sent request. SLO attainment and
 * goodput follow {@link SloPolicy}; without objectives attainment is null and goodput counts ok requests.
 * {@code error_codes} counts failed requests by their OpenAI error code (else their outcome),
 * {@code modes} requests by how the gateway says their worker was chosen, {@code queue_ms} the queue
 * wait of ok requests; {@code tenants} and {@code bands} repeat requests, TTFT, queue wait and goodput
 * per tenant ({@code --tenants}) and per band ({@code --priority}). {@code engine} holds the cluster's counters over
 * the run ({@link io.flotilla.bench.run.EngineCounts}): predicted-vs-actual overlap of KV-routed requests, the
 * engines' own counts of reused and evaluated prompt tokens, and the worker processes' CPU time per ok request.
 */
public record RunSummary(RunContext context, RunResult run, SloPolicy slo, long requests, long completed, long failed,
                         Map<String, Long> outcomes, LatencyStats ttft, LatencyStats itl, LatencyStats itlMean,
                         LatencyStats e2e, long outputTokens, long promptTokens, long cachedTokens, long sloMet,
                         Map<String, long[]> workers, Map<String, Long> prefillWorkers, Map<String, Long> errorCodes,
                         Map<String, Long> modes, LatencyStats queueMs, Map<String, Group> byTenant,
                         Map<String, Group> byBand) {

    /**
     * The requests of one tenant or one band.
     *
     * @param ttft    TTFT of its ok requests
     * @param queueMs queue wait of its ok requests (as the gateway reported it)
     * @param sloMet  its requests meeting the SLOs
     */
    public record Group(long requests, long completed, LatencyStats ttft, LatencyStats queueMs, long sloMet) {

        Group add(RequestResult r, boolean met) {
            if (r.ok()) {
                ttft.add(r.timing().ttftMs());
                if (!Double.isNaN(r.timing().queueMs())) {
                    queueMs.add(r.timing().queueMs());
                }
            }
            return new Group(requests + 1, completed + (r.ok() ? 1 : 0), ttft, queueMs, sloMet + (met ? 1 : 0));
        }

        static Group empty() {
            return new Group(0, 0, new LatencyStats(100_000, 3), new LatencyStats(100_000, 5), 0);
        }

        Map<String, Object> toJson(double durationS) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("requests", requests);
            m.put("completed", completed);
            m.put("failed", requests - completed);
            m.put("ttft_ms", ttft.summary());
            m.put("queue_ms", queueMs.summary());
            m.put("slo_met", sloMet);
            m.put("goodput_rps", durationS <= 0 ? null : num(sloMet / durationS));
            return m;
        }
    }

    /** Per worker: {requests, prompt tokens, cached tokens}. */
    public static final int W_REQUESTS = 0;
    public static final int W_PROMPT = 1;
    public static final int W_CACHED = 2;

    public static RunSummary of(RunContext context, RunResult run, SloPolicy slo) {
        LatencyStats ttft = new LatencyStats();
        LatencyStats itlMean = new LatencyStats();
        LatencyStats e2e = new LatencyStats();
        Map<String, Long> outcomes = new TreeMap<>();
        Map<String, long[]> workers = new TreeMap<>();
        Map<String, Long> prefill = new TreeMap<>();
        Map<String, Long> errorCodes = new TreeMap<>();
        Map<String, Long> modes = new TreeMap<>();
        LatencyStats queue = new LatencyStats();
        Map<String, Group> byTenant = new TreeMap<>();
        Map<String, Group> byBand = new TreeMap<>();
        long completed = 0;
        long output = 0;
        long prompt = 0;
        long cached = 0;
        long met = 0;
        for (RequestResult r : run.requests()) {
            outcomes.merge(r.end().outcome(), 1L, Long::sum);
            if (r.usage().promptTokens() >= 0) {
                prompt += r.usage().promptTokens();
                cached += Math.max(0, r.usage().cachedTokens());
            }
            if (!r.placement().worker().isEmpty()) {
                long[] w = workers.computeIfAbsent(r.placement().worker(), k -> new long[3]);
                w[W_REQUESTS]++;
                w[W_PROMPT] += Math.max(0, r.usage().promptTokens());
                w[W_CACHED] += Math.max(0, r.usage().cachedTokens());
            }
            if (!r.placement().prefillWorker().isEmpty()) {
                prefill.merge(r.placement().prefillWorker(), 1L, Long::sum);
            }
            boolean meets = slo.meets(r.ok(), r.timing().ttftMs(), r.timing().itlMeanMs());
            if (meets) {
                met++;
            }
            if (!r.ok()) {
                RequestResult.End end = r.end();
                errorCodes.merge(end.errorCode() == null || end.errorCode().isEmpty() ? end.outcome() : end.errorCode(), 1L,
                        Long::sum);
            } else if (!Double.isNaN(r.timing().queueMs())) {
                queue.add(r.timing().queueMs());
            }
            if (r.placement().mode() != null && !r.placement().mode().isEmpty()) {
                modes.merge(r.placement().mode(), 1L, Long::sum);
            }
            if (!r.sent().tenant().isEmpty()) {
                byTenant.compute(r.sent().tenant(), (k, g) -> (g == null ? Group.empty() : g).add(r, meets));
            }
            if (!r.sent().priority().isEmpty()) {
                byBand.compute(r.sent().priority(), (k, g) -> (g == null ? Group.empty() : g).add(r, meets));
            }
            if (r.ok()) {
                completed++;
                output += r.usage().completionTokens();
                ttft.add(r.timing().ttftMs());
                itlMean.add(r.timing().itlMeanMs());
                e2e.add(r.timing().e2eMs());
            }
        }
        long n = run.requests().size();
        return new RunSummary(context, run, slo, n, completed, n - completed, outcomes, ttft, run.chunkGapsMs(), itlMean,
                e2e, output, prompt, cached, met, workers, prefill, errorCodes, modes, queue, byTenant, byBand);
    }

    public double durationS() {
        return run.durationS();
    }

    public double outputTokensPerS() {
        return rate(outputTokens);
    }

    public double requestsPerS() {
        return rate(completed);
    }

    public double cacheHitRate() {
        return promptTokens == 0 ? Double.NaN : (double) cachedTokens / promptTokens;
    }

    public double oracleHitRate() {
        return run.oraclePromptTokens() == 0 ? Double.NaN : (double) run.oracleCachedTokens() / run.oraclePromptTokens();
    }

    /** The same-capacity LRU's hit rate over every sent request; NaN when none ran. */
    public double lruHitRate() {
        return run.lruCapacityBlocks() == 0 || run.oraclePromptTokens() == 0 ? Double.NaN
                : (double) run.lruCachedTokens() / run.oraclePromptTokens();
    }

    /** Prompt tokens found in {@code tier} (device, host, disk) / prompt tokens sent; NaN when not read. */
    public double tierHitRate(String tier) {
        Long hits = run.tierHitTokens().get(tier);
        return hits == null || run.oraclePromptTokens() == 0 ? Double.NaN : (double) hits / run.oraclePromptTokens();
    }

    /** Share of finished KV-routed requests whose predicted overlap was the worker's to the block; NaN when none. */
    public double overlapExactShare() {
        return run.engine().exactShare();
    }

    /** Worker processes' CPU time (engine and JVM) per ok request; NaN when not read. */
    public double workerCpuMsPerRequest() {
        return completed == 0 ? Double.NaN : run.engine().workerCpuMs() / completed;
    }

    /** Fraction of all requests meeting the SLOs; NaN without objectives. */
    public double sloAttainment() {
        return !slo.defined() || requests == 0 ? Double.NaN : (double) sloMet / requests;
    }

    public double goodputRps() {
        return rate(sloMet);
    }

    private double rate(long count) {
        return run.durationS() <= 0 ? Double.NaN : count / run.durationS();
    }

    /** The {@code summary.json} document. */
    public Map<String, Object> toJson() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("label", context.label());
        m.put("workload", run.workload());
        m.put("url", context.url());
        m.put("model", context.model());
        m.put("router_mode", context.routerMode());
        m.put("disagg_hint", context.disaggHint());
        m.put("started_at", run.startedAt().toString());
        m.put("duration_s", num(run.durationS()));
        m.put("stop_reason", run.stopReason());
        m.put("requests", requests);
        m.put("completed", completed);
        m.put("failed", failed);
        m.put("outcomes", outcomes);
        m.put("error_codes", errorCodes);
        m.put("modes", modes);
        m.put("queue_ms", queueMs.summary());
        m.put("ttft_ms", ttft.summary());
        m.put("itl_ms", itl.summary());
        m.put("itl_mean_ms", itlMean.summary());
        m.put("e2e_ms", e2e.summary());
        m.put("output_tokens", outputTokens);
        m.put("output_tokens_per_s", num(outputTokensPerS()));
        m.put("requests_per_s", num(requestsPerS()));
        m.put("prompt_tokens", promptTokens);
        m.put("cached_tokens", cachedTokens);
        m.put("cache_hit_rate", num(cacheHitRate()));
        m.put("prompt_tokens_sent", run.oraclePromptTokens());
        m.put("oracle_cached_tokens", run.oracleCachedTokens());
        m.put("oracle_hit_rate", num(oracleHitRate()));
        m.put("oracle_block_size", context.config().blockSize());
        m.put("lru_capacity_blocks", run.lruCapacityBlocks());
        m.put("lru_hit_rate", num(lruHitRate()));
        Map<String, Object> tiers = new LinkedHashMap<>();
        for (String t : new String[] {"device", "host", "disk"}) {
            tiers.put(t, num(tierHitRate(t)));
        }
        m.put("tier_hit_rate", tiers);
        Map<String, Object> sloMap = new LinkedHashMap<>();
        sloMap.put("ttft_ms", slo.ttftMs());
        sloMap.put("itl_ms", slo.itlMs());
        m.put("slo", sloMap);
        m.put("slo_attainment", num(sloAttainment()));
        m.put("goodput_rps", num(goodputRps()));
        Map<String, Object> w = new LinkedHashMap<>();
        w.put("distinct", workers.size());
        Map<String, Long> req = new LinkedHashMap<>();
        Map<String, Long> pr = new LinkedHashMap<>();
        Map<String, Long> ca = new LinkedHashMap<>();
        workers.forEach((k, v) -> {
            req.put(k, v[W_REQUESTS]);
            pr.put(k, v[W_PROMPT]);
            ca.put(k, v[W_CACHED]);
        });
        w.put("requests", req);
        w.put("prompt_tokens", pr);
        w.put("cached_tokens", ca);
        w.put("prefill_requests", prefillWorkers);
        m.put("workers", w);
        Map<String, Object> tenants = new LinkedHashMap<>();
        byTenant.forEach((k, g) -> tenants.put(k, g.toJson(run.durationS())));
        m.put("tenants", tenants);
        Map<String, Object> bands = new LinkedHashMap<>();
        byBand.forEach((k, g) -> bands.put(k, g.toJson(run.durationS())));
        m.put("bands", bands);
        Map<String, Object> engine = new LinkedHashMap<>();
        io.flotilla.bench.run.EngineCounts e = run.engine();
        Map<String, Object> predictions = new LinkedHashMap<>();
        predictions.put("exact", num(e.exact()));
        predictions.put("over", num(e.over()));
        predictions.put("under", num(e.under()));
        engine.put("overlap_predictions", predictions);
        engine.put("overlap_exact_share", num(overlapExactShare()));
        engine.put("engine_requests", num(e.engineRequests()));
        engine.put("mirror_disagree", num(e.mirrorDisagree()));
        engine.put("reused_tokens", num(e.reusedTokens()));
        engine.put("evaluated_tokens", num(e.evaluatedTokens()));
        engine.put("evaluated_tokens_per_request", num(e.evaluatedPerRequest()));
        engine.put("reused_token_share", num(e.reusedShare()));
        engine.put("worker_cpu_ms", num(e.workerCpuMs()));
        engine.put("worker_cpu_ms_per_request", num(workerCpuMsPerRequest()));
        m.put("engine", engine);
        m.put("max_dispatch_lag_ms", num(run.maxDispatchLagMs()));
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("seed", context.seed());
        cfg.put("speedup", context.config().speedup());
        cfg.put("concurrency", context.config().concurrency());
        cfg.put("max_requests", context.config().maxRequests());
        cfg.put("duration_s", context.config().duration() == null ? null : context.config().duration().toMillis() / 1000.0);
        cfg.put("queue_timeout_ms", context.queueTimeout() == null ? null : context.queueTimeout().toMillis());
        cfg.put("tenants", context.tenants());
        cfg.put("priority", context.priority());
        m.put("config", cfg);
        return m;
    }

    static Double num(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v * 1e6) / 1e6;
    }
}
