package io.flotilla.bench;

import io.flotilla.bench.client.ClusterAdmin;
import io.flotilla.bench.report.RunDirs;
import io.flotilla.bench.report.RunSummary;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;

/**
 * {@code bench compare}: the same workload once per variant on the running cluster. Before each run:
 * switch the router's mode, check it took, clear every worker's prefix cache (unless told not to),
 * wait {@code settleMs} for the indexer to apply the resulting events; then run into
 * {@code <out>/<label>/}. The router's original mode is restored at the end when it was known.
 */
final class CompareRun {

    /** One run of the comparison. {@code disaggHint} is the {@code x-flotilla-disagg} value, null for none. */
    record Variant(String mode, String disaggHint, String label) {
    }

    /** Runs one variant and writes its reports. */
    interface Runner {
        RunSummary run(String label, String disaggHint, String routerMode, Path dir) throws IOException;
    }

    private final ClusterAdmin admin;
    private final Runner runner;
    private final LongConsumer sleeper;
    private final boolean clearCaches;
    private final long settleMs;
    private final PrintStream log;

    CompareRun(ClusterAdmin admin, Runner runner, LongConsumer sleeper, boolean clearCaches, long settleMs, PrintStream log) {
        this.admin = admin;
        this.runner = runner;
        this.sleeper = sleeper;
        this.clearCaches = clearCaches;
        this.settleMs = settleMs;
        this.log = log;
    }

    /**
     * One variant per mode; with {@code disagg}, two per mode: {@code <mode>/agg} (header {@code off}) and
     * {@code <mode>/pd} (header {@code auto}).
     */
    static List<Variant> variants(List<String> modes, boolean disagg) {
        if (modes.isEmpty()) {
            throw new IllegalArgumentException("--modes needs at least one mode");
        }
        List<Variant> v = new ArrayList<>();
        for (String m : modes) {
            if (disagg) {
                v.add(new Variant(m, "off", m + "/agg"));
                v.add(new Variant(m, "auto", m + "/pd"));
            } else {
                v.add(new Variant(m, null, m));
            }
        }
        return v;
    }

    /** The ratio baseline: the first round-robin variant, else the first. */
    static int baseline(List<Variant> variants) {
        for (int i = 0; i < variants.size(); i++) {
            if (variants.get(i).mode().equals("round-robin")) {
                return i;
            }
        }
        return 0;
    }

    List<RunSummary> run(List<Variant> variants, Path out) throws IOException {
        String original = admin.routerMode();
        List<RunSummary> results = new ArrayList<>();
        try {
            for (Variant v : variants) {
                admin.setRouterMode(v.mode());
                String now = admin.routerMode();
                if (!now.equals(v.mode())) {
                    log.println("compare: warning: router reports mode '" + now + "' after switching to '" + v.mode() + "'");
                }
                if (clearCaches) {
                    int blocks = 0;
                    List<ClusterAdmin.Worker> workers = admin.workers();
                    for (ClusterAdmin.Worker w : workers) {
                        blocks += admin.clearKvCache(w);
                    }
                    log.println("compare: cleared " + blocks + " cached blocks on " + workers.size() + " workers");
                    if (blocks == 0 && !results.isEmpty()) {
                        log.println("compare: warning: nothing was cleared after a run; workers whose engine cannot drop "
                                + "its cache (llama-cpp) start this run with the previous run's prompts, the same ones");
                    }
                }
                if (settleMs > 0) {
                    sleeper.accept(settleMs);
                }
                results.add(runner.run(v.label(), v.disaggHint(), now, out.resolve(RunDirs.dirName(v.label()))));
            }
        } finally {
            if (!original.equals("unknown")) {
                try {
                    admin.setRouterMode(original);
                } catch (RuntimeException e) {
                    log.println("compare: could not restore router mode '" + original + "': " + e.getMessage());
                }
            }
        }
        return results;
    }
}
