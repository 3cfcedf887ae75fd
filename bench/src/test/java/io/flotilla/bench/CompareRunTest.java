package io.flotilla.bench;

import io.flotilla.bench.client.ClusterAdmin;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Sequencing of {@code bench compare} against an in-memory cluster. */
class CompareRunTest {

    private final List<String> log = new ArrayList<>();

    private class FakeAdmin implements ClusterAdmin {
        String mode = "kv";

        @Override
        public String routerMode() {
            return mode;
        }

        @Override
        public void setRouterMode(String m) {
            log.add("mode " + m);
            mode = m;
        }

        @Override
        public List<Worker> workers() {
            return List.of(new Worker("worker-0", "h:1", "AGGREGATED"), new Worker("worker-1", "h:2", "AGGREGATED"));
        }

        @Override
        public int clearKvCache(Worker w) {
            log.add("clear " + w.id());
            return 3;
        }
    }

    private CompareRun compare(ClusterAdmin admin, boolean clear) {
        return new CompareRun(admin, (label, hint, mode, dir) -> {
            log.add("run " + label + " hint=" + hint + " mode=" + mode + " dir=" + dir.getFileName());
            return null;
        }, ms -> log.add("settle " + ms), clear, 1500, new java.io.PrintStream(java.io.OutputStream.nullOutputStream()));
    }

    @Test
    void eachRunSwitchesModeClearsEveryWorkerSettlesThenRunsAndTheOriginalModeReturns() throws Exception {
        compare(new FakeAdmin(), true).run(CompareRun.variants(List.of("round-robin", "kv"), false), Path.of("out"));

        assertThat(log).containsExactly(
                "mode round-robin", "clear worker-0", "clear worker-1", "settle 1500", "run round-robin hint=null mode=round-robin dir=round-robin",
                "mode kv", "clear worker-0", "clear worker-1", "settle 1500", "run kv hint=null mode=kv dir=kv",
                "mode kv");
    }

    @Test
    void disaggRunsEveryModeAggregatedAndWithPdAllowed() throws Exception {
        compare(new FakeAdmin(), false).run(CompareRun.variants(List.of("kv"), true), Path.of("out"));

        assertThat(log).containsExactly(
                "mode kv", "settle 1500", "run kv/agg hint=off mode=kv dir=kv-agg",
                "mode kv", "settle 1500", "run kv/pd hint=auto mode=kv dir=kv-pd",
                "mode kv");
    }

    @Test
    void workersThatClearNothingAfterARunAreReportedAsWarm() throws Exception {
        FakeAdmin keeps = new FakeAdmin() {
            @Override
            public int clearKvCache(Worker w) {
                return 0;
            }
        };
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        new CompareRun(keeps, (label, hint, mode, dir) -> null, ms -> { }, true, 0, new java.io.PrintStream(out, true))
                .run(CompareRun.variants(List.of("round-robin", "kv"), false), Path.of("out"));

        assertThat(out.toString().lines().filter(l -> l.contains("warning: nothing was cleared")))
                .as("not before the first run, whose caches nobody here filled; before the second").hasSize(1);
    }

    @Test
    void baselineIsRoundRobinWhenPresent() {
        assertThat(CompareRun.baseline(CompareRun.variants(List.of("kv", "round-robin", "load"), false))).isEqualTo(1);
        assertThat(CompareRun.baseline(CompareRun.variants(List.of("kv", "load"), false))).isZero();
        assertThat(CompareRun.baseline(CompareRun.variants(List.of("load", "round-robin"), true))).isEqualTo(2);
        assertThatThrownBy(() -> CompareRun.variants(List.of(), false)).hasMessageContaining("--modes");
    }

    @Test
    void aRouterThatRefusesAModeStopsTheComparison() {
        FakeAdmin admin = new FakeAdmin() {
            @Override
            public void setRouterMode(String m) {
                if (m.equals("load")) {
                    throw new IllegalStateException("router refused mode 'load'");
                }
                super.setRouterMode(m);
            }
        };
        assertThatThrownBy(() -> compare(admin, false).run(CompareRun.variants(List.of("round-robin", "load"), false), Path.of("o")))
                .hasMessageContaining("refused");
        assertThat(log).last().isEqualTo("mode kv");
    }
}
