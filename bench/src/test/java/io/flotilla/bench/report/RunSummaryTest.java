package io.flotilla.bench.report;

import io.flotilla.bench.run.RequestResult;
import io.flotilla.bench.run.RunConfig;
import io.flotilla.bench.run.RunContext;
import io.flotilla.bench.run.RunResult;
import io.flotilla.bench.stats.LatencyStats;
import io.flotilla.bench.stats.SloPolicy;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class RunSummaryTest {

    private static RequestResult req(long id, String outcome, double ttft, double itl, int prompt, int cached, int completion,
                                     String worker) {
        return new RequestResult(new RequestResult.Sent(id, -1, 0, 0, 0, prompt, completion, 0, "", ""),
                new RequestResult.End(outcome, outcome.equals("ok") ? 200 : 503, "", null),
                new RequestResult.Timing(ttft, ttft + 100, itl, itl, 2, Double.NaN),
                new RequestResult.Usage(outcome.equals("ok") ? prompt : -1, outcome.equals("ok") ? cached : -1, completion),
                new RequestResult.Placement(worker, "", ""));
    }

    private static RunSummary summary(SloPolicy slo) {
        List<RequestResult> rows = List.of(
                req(0, "ok", 100, 10, 1000, 0, 50, "w0"),
                req(1, "ok", 300, 10, 1000, 800, 50, "w1"),
                req(2, "ok", 150, 40, 2000, 1200, 100, "w0"),
                req(3, "http_503", Double.NaN, Double.NaN, 500, 0, 0, ""));
        RunResult run = new RunResult("test", Instant.EPOCH, 10.0, rows, new LatencyStats(), 4500, 1600, new long[10],
                new long[10], 0, "workload-exhausted");
        RunContext ctx = new RunContext("run", "http://gw", "m", "kv", null, 42,
                new RunConfig(0, null, 0, 1, 16, Duration.ofSeconds(1)));
        return RunSummary.of(ctx, run, slo);
    }

    @Test
    void arithmeticOfRatesHitRatesAndSlos() {
        RunSummary s = summary(new SloPolicy(200.0, 20.0));

        assertThat(s.requests()).isEqualTo(4);
        assertThat(s.completed()).isEqualTo(3);
        assertThat(s.failed()).isEqualTo(1);
        assertThat(s.outputTokensPerS()).isEqualTo(20.0);
        assertThat(s.requestsPerS()).isEqualTo(0.3);
        assertThat(s.cacheHitRate()).as("usage of ok requests: 2000 / 4000").isEqualTo(0.5);
        assertThat(s.oracleHitRate()).isEqualTo(1600.0 / 4500);
        assertThat(s.sloMet()).as("only request 0 meets TTFT ≤ 200 and ITL ≤ 20").isEqualTo(1);
        assertThat(s.sloAttainment()).isEqualTo(0.25);
        assertThat(s.goodputRps()).isEqualTo(0.1);
        assertThat(s.ttft().percentile(50)).isEqualTo(150);
        assertThat(s.workers()).containsOnlyKeys("w0", "w1");
        assertThat(s.workers().get("w0")).containsExactly(2, 3000, 1200);

        Map<String, Object> json = s.toJson();
        assertThat(json).containsEntry("cache_hit_rate", 0.5).containsEntry("slo_attainment", 0.25)
                .containsEntry("goodput_rps", 0.1).containsEntry("router_mode", "kv").containsEntry("requests", 4L);
        @SuppressWarnings("unchecked")
        Map<String, Object> workers = (Map<String, Object>) json.get("workers");
        @SuppressWarnings("unchecked")
        Map<String, Object> outcomes = (Map<String, Object>) json.get("outcomes");
        assertThat(workers).containsEntry("distinct", 2);
        assertThat(outcomes).containsEntry("http_503", 1L).containsEntry("ok", 3L);
    }

    @Test
    void withoutObjectivesAttainmentIsNullAndGoodputCountsOkRequests() {
        RunSummary s = summary(SloPolicy.NONE);
        assertThat(s.sloAttainment()).isNaN();
        assertThat(s.toJson()).containsEntry("slo_attainment", null);
        assertThat(s.goodputRps()).isEqualTo(0.3);
    }

    @Test
    void compareRatiosAndSvgTicks() {
        assertThat(CompareReport.ratio(50, 100)).isEqualTo("0.50×");
        assertThat(CompareReport.ratio(0, 0)).isEqualTo("1.00×");
        assertThat(CompareReport.ratio(5, 0)).isEqualTo("–");
        assertThat(CompareReport.ratio(Double.NaN, 3)).isEqualTo("–");
        CompareReport.Metric pooled = CompareReport.METRICS.stream().filter(m -> m.name().startsWith("event gap p50"))
                .findFirst().orElseThrow();
        assertThat(CompareReport.ratio(pooled, 4.57, 0.00226)).as("no ratio against a gap under the read resolution")
                .isEqualTo("–");
        assertThat(CompareReport.value(pooled, 0.00226)).isEqualTo("<0.10");
        assertThat(CompareReport.ratio(pooled, 4.57, 2.0)).isEqualTo("2.29×");
        assertThat(CompareReport.METRICS).extracting(CompareReport.Metric::name)
                .as("ITL as users read it, first").contains("ITL p50 (ms, mean per request)");
        assertThat(SvgChart.ticks(0, 97)).containsExactly(0, 20, 40, 60, 80, 100);
        assertThat(SvgChart.ticks(0, 1)).containsExactly(0, 0.2, 0.4, 0.6000000000000001, 0.8, 1);
        assertThat(SvgChart.esc("<a & \"b\">")).isEqualTo("&lt;a &amp; &quot;b&quot;&gt;");
        assertThat(RequestsCsv.text("a,\"b\"")).isEqualTo("\"a,\"\"b\"\"\"");
    }

    @Test
    void engineCountsReachTheSummaryAndTheCompareTable() {
        RunSummary plain = summary(SloPolicy.NONE);
        RunSummary kv = RunSummary.of(plain.context(), plain.run().withEngine(
                new io.flotilla.bench.run.EngineCounts(49, 1, 0, 3, 0, 3000, 1000, 600)), SloPolicy.NONE);

        assertThat(kv.overlapExactShare()).isEqualTo(0.98);
        assertThat(kv.workerCpuMsPerRequest()).as("600 ms over 3 ok requests").isEqualTo(200);
        @SuppressWarnings("unchecked")
        Map<String, Object> engine = (Map<String, Object>) kv.toJson().get("engine");
        assertThat(engine).containsEntry("overlap_exact_share", 0.98).containsEntry("reused_token_share", 0.75)
                .containsEntry("evaluated_tokens_per_request", 333.333333);
        assertThat(plain.overlapExactShare()).as("not read: unknown, not 0").isNaN();

        String md = CompareReport.markdown(List.of(plain, kv), 0, "");
        assertThat(md).contains("| predicted = actual overlap (share of KV-routed requests) | – (–) | 98.0% (–) |")
                .contains("| engine reused-token share | – (–) | 75.0% (–) |")
                .contains("| worker CPU per request (ms) | – (–) | 200");
    }
}
