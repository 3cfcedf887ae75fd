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
 */
public record RunSummary(RunContext context, RunResult run, SloPolicy slo, long requests, long completed, long failed,
                         Map<String, Long> outcomes, LatencyStats ttft, LatencyStats itl, LatencyStats itlMean,
                         LatencyStats e2e, long outputTokens, long promptTokens, long cachedTokens, long sloMet,
                         Map<String, long[]> workers, Map<String, Long> prefillWorkers) {

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
        long completed = 0;
        long output = 0;
        long prompt = 0;
        long cached = 0;
        long met = 0;
        for (RequestResult r : run.requests()) {
            outcomes.merge(r.outcome(), 1L, Long::sum);
            if (r.promptTokens() >= 0) {
                prompt += r.promptTokens();
                cached += Math.max(0, r.cachedTokens());
            }
            if (!r.worker().isEmpty()) {
                long[] w = workers.computeIfAbsent(r.worker(), k -> new long[3]);
                w[W_REQUESTS]++;
                w[W_PROMPT] += Math.max(0, r.promptTokens());
                w[W_CACHED] += Math.max(0, r.cachedTokens());
            }
            if (!r.prefillWorker().isEmpty()) {
                prefill.merge(r.prefillWorker(), 1L, Long::sum);
            }
            if (slo.meets(r.ok(), r.ttftMs(), r.itlMeanMs())) {
                met++;
            }
            if (r.ok()) {
                completed++;
                output += r.completionTokens();
                ttft.add(r.ttftMs());
                itlMean.add(r.itlMeanMs());
                e2e.add(r.e2eMs());
            }
        }
        long n = run.requests().size();
        return new RunSummary(context, run, slo, n, completed, n - completed, outcomes, ttft, run.chunkGapsMs(), itlMean,
                e2e, output, prompt, cached, met, workers, prefill);
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
        m.put("max_dispatch_lag_ms", num(run.maxDispatchLagMs()));
        Map<String, Object> cfg = new LinkedHashMap<>();
        cfg.put("seed", context.seed());
        cfg.put("speedup", context.config().speedup());
        cfg.put("concurrency", context.config().concurrency());
        cfg.put("max_requests", context.config().maxRequests());
        cfg.put("duration_s", context.config().duration() == null ? null : context.config().duration().toMillis() / 1000.0);
        m.put("config", cfg);
        return m;
    }

    static Double num(double v) {
        return Double.isNaN(v) || Double.isInfinite(v) ? null : Math.round(v * 1e6) / 1e6;
    }
}
