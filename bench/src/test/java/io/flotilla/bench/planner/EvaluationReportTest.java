package io.flotilla.bench.planner;

import com.fasterxml.jackson.databind.JsonNode;
import io.flotilla.bench.workload.BurstyTrace;
import org.junit.jupiter.api.Test;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class EvaluationReportTest {

    private static final String HEADER = "id,session,turn,scheduled_ms,sent_ms,prompt_len,max_tokens,outcome,http_status,ttft_ms,"
            + "e2e_ms,itl_mean_ms,itl_max_ms,chunks,prompt_tokens,cached_tokens,completion_tokens,oracle_cached_tokens,worker,"
            + "prefill_worker,error\n";

    private static String row(long id, double scheduled, String outcome, String ttft, String itl, String error) {
        return id + ",,0," + scheduled + "," + scheduled + ",2000,64," + outcome + ",200," + ttft + ",1000," + itl
                + ",80,64,2000,0,64,0,worker-0,," + error + "\n";
    }

    private static JsonNode json(String s) throws Exception {
        return PlannerEvalCli.JSON.readTree(s);
    }

    @Test
    void requestsCsvCellsMayBeQuotedWithCommasQuotesAndNewlines() {
        String csv = HEADER + row(0, 10, "ok", "100", "30", "") + row(1, 20, "error", "", "", "\"busy, \"\"retry\"\"\nlater\"")
                + row(2, 30, "ok", "900", "", "");
        List<EvaluationReport.Request> r = EvaluationReport.requests(csv);
        assertThat(r).hasSize(3);
        assertThat(r.get(0)).isEqualTo(new EvaluationReport.Request(10, true, 100, 30));
        assertThat(r.get(1).ok()).isFalse();
        assertThat(r.get(1).ttftMs()).isNaN();
        assertThat(r.get(2).itlMeanMs()).isNaN();
        assertThat(EvaluationReport.rows(HEADER + row(1, 20, "error", "", "", "\"a,b\"")).get(1)).endsWith("a,b");
    }

    @Test
    void attainmentCountsFailuresAsMissesAndAMissingItlAsMet() {
        List<EvaluationReport.Request> r = List.of(
                new EvaluationReport.Request(0, true, 100, 30),   // meets both
                new EvaluationReport.Request(0, true, 100, 90),   // ITL miss
                new EvaluationReport.Request(0, true, 2000, 30),  // TTFT miss
                new EvaluationReport.Request(0, false, Double.NaN, Double.NaN), // failed
                new EvaluationReport.Request(0, true, 100, Double.NaN)); // one token: no ITL
        assertThat(EvaluationReport.attainment(r, 1000, 50)).isEqualTo(2.0 / 5);
        assertThat(EvaluationReport.attainment(r, 1000, Double.POSITIVE_INFINITY)).isEqualTo(3.0 / 5);
        assertThat(EvaluationReport.attainment(r, Double.POSITIVE_INFINITY, 50)).isEqualTo(3.0 / 5);
        assertThat(EvaluationReport.attainment(List.of(), 1000, 50)).isNaN();
    }

    @Test
    void theTableComparesWorkerSecondsWithTheBaselineAndSplitsAttainmentByPhase() throws Exception {
        JsonNode summary = json("{\"ttft_ms\":{\"p50\":120,\"p99\":900},\"itl_mean_ms\":{\"p50\":30,\"p99\":45.5}}");
        Map<String, EvaluationReport.Run> runs = new LinkedHashMap<>();
        runs.put("peak-static", new EvaluationReport.Run(summary, EvaluationReport.requests(HEADER
                + row(0, 1_000, "ok", "100", "30", "") + row(1, 12_000, "ok", "100", "30", "")),
                json("{\"live_worker_seconds\":400,\"min_live\":4,\"max_live\":4,\"series_step_s\":5,\"live_series\":[4,4]}")));
        runs.put("planner", new EvaluationReport.Run(summary, EvaluationReport.requests(HEADER
                + row(0, 1_000, "ok", "100", "30", "") + row(1, 12_000, "ok", "3000", "30", "")),
                json("{\"live_worker_seconds\":180,\"min_live\":1,\"max_live\":3,\"series_step_s\":5,\"live_series\":[1,3]}")));

        String md = EvaluationReport.render(runs, "peak-static", 1000, 50,
                BurstyTrace.parsePhases("10s@1,10s@1-5"), 500);

        assertThat(md).contains("| peak-static | 4–4 | 2 | 0 | **100.0%** | 100.0% | 100.0% | 120 / 900 ms | 30 / 45.5 ms | 400 | 100.0% |");
        assertThat(md).contains("| planner | 1–3 | 2 | 0 | **50.0%** | 50.0% | 100.0% | 120 / 900 ms | 30 / 45.5 ms | 180 | 45.0% |");
        // Phases are shifted by the trace's first timestamp (500 ms): 0–10 s holds the request at 1 s, 10–20 s the one at 12 s.
        assertThat(md).contains("| 0–10 s, 1 req/s | 100.0% of 1 | 100.0% of 1 |");
        assertThat(md).contains("| 10–20 s, 1→5 req/s | 100.0% of 1 | 0.0% of 1 |");
        assertThat(md).contains("* planner: `1 3`");
    }
    @Test
    void workerLaunchesComeFromTheLauncherStateFile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        java.nio.file.Path state = dir.resolve("cluster.properties");
        java.nio.file.Files.writeString(state, "services=kafka,router,worker-0,worker-3\nkafka.started=1\nrouter.started=2\n"
                + "worker-0.started=1000\nworker-3.started=25000\nlayout.aggregated=1\n");
        assertThat(PlannerEvalCli.workerLaunches(state)).containsExactly(Map.entry("worker-0", 1000L), Map.entry("worker-3", 25000L));
    }
}
