package io.flotilla.bench.planner;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class SuiteReportTest {

    private static SuiteReport.Row row(String shape, double staticAtt, double att, double ws, double staticWs) {
        return new SuiteReport.Row(shape, shape + " traffic", 1000, staticAtt, 4, staticWs, att, 1, 4, ws, 6, "—", "1.0→2.0 · 1.5→2.5");
    }

    @Test
    void theTableHasEveryShapeTheSpreadAndTheTargetsVerdict() {
        String md = SuiteReport.render(List.of(row("a", 1, 0.99, 500, 1000), row("b", 1, 0.93, 600, 1000),
                row("c", 0.99, 1, 750, 1000)), 4000, 200);
        assertThat(md).contains("| a | 1000 | 4, 100.0% | **99.0%** | 1–4 | 500 of 1000 | **50.0%** | 6 | — | 1.0→2.0 · 1.5→2.5 |");
        assertThat(md).contains("| planner SLO attainment | 93.0% | 99.0% | 100.0% |");
        assertThat(md).contains("| planner worker-seconds of peak-static | 50.0% | 60.0% | 75.0% |");
        assertThat(md).contains("| peak-static SLO attainment | 99.0% | 100.0% | 100.0% |");
        assertThat(md).contains("**not met** by b").contains("median worker-seconds ≤ 55.0% of peak-static — **not met** (60.0%)")
                .contains("none above 70.0% — **not met** by c");
        assertThat(SuiteReport.median(new double[] {1, 2, 3, 4})).isEqualTo(2.5);
    }

    @Test
    void scaleEventsAndPeriodsComeFromTheDecisionsInsideTheReplay() throws Exception {
        var decisions = PlannerEvalCli.JSON.readTree("""
                {"decisions": [
                  {"ts": 5000, "targets": {"aggregated": 2}, "period_s": 100.0},
                  {"ts": 4000, "targets": {"aggregated": 2}, "period_s": 100.0},
                  {"ts": 3000, "targets": {"aggregated": 3}, "period_s": null},
                  {"ts": 2000, "targets": {"aggregated": 1}, "period_s": null},
                  {"ts": 500, "targets": {"aggregated": 4}, "period_s": null}
                ]}""");
        assertThat(SuiteReport.scaleEvents(decisions, 1000, 6000)).isEqualTo(2); // 1→3→2; the one before the replay does not count
        assertThat(SuiteReport.period(decisions, 1000, 6000)).isEqualTo("100 s (from +3 s)");
        assertThat(SuiteReport.period(decisions, 1000, 3500)).isEqualTo("—");
    }

    @Test
    void loadAveragesAreReadFromTheRunsLoadFile(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("load.txt"), "before 1.23 0.98 0.75\nafter 2.50 1.10 0.80\n");
        assertThat(SuiteReport.loadOf(dir.resolve("load.txt"))).isEqualTo("1.23→2.50");
        assertThat(SuiteReport.loadOf(dir.resolve("missing.txt"))).isEqualTo("—");
    }
}
