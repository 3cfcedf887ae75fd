package io.flotilla.bench;

import io.flotilla.bench.client.RouterAdmin;
import io.flotilla.bench.report.CompareReport;
import io.flotilla.bench.report.RunSummary;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code bench compare}: see {@link CompareRun}. */
@Command(name = "compare", mixinStandardHelpOptions = true, sortOptions = false, usageHelpWidth = 120,
        description = {
            "Runs the same workload once per router mode on the running cluster and writes compare.md, compare.html "
                    + "and compare.json (ratios against round-robin) plus one report directory per run.",
            "Before each run: POST {router-url}/actuator/router {\"mode\": M}, WorkerService.ClearKvCache on every "
                    + "worker RouterService.ListWorkers lists, wait --settle-ms."})
final class CompareCommand implements Callable<Integer> {

    @Option(names = "--modes", defaultValue = "round-robin,load,kv", split = ",",
            description = "Router modes to compare, in order (default: ${DEFAULT-VALUE}).")
    List<String> modes;

    @Option(names = "--settle-ms", defaultValue = "2000",
            description = "Wait after clearing caches so the indexer applies the events (default: ${DEFAULT-VALUE}).")
    long settleMs;

    @Option(names = "--disagg",
            description = "Run every mode twice: aggregated (x-flotilla-disagg: off) and P/D allowed (x-flotilla-disagg: auto). "
                    + "Needs a cluster with prefill and decode pools (bin/flotilla up --prefill N --decode M).")
    boolean disagg;

    @Option(names = "--skip-clear", description = "Do not clear worker caches between runs (later runs start warm).")
    boolean skipClear;

    @Mixin
    WorkloadOptions workload;

    @Mixin
    RunOptions options;

    @Override
    public Integer call() throws Exception {
        Path out = options.outDir();
        List<CompareRun.Variant> variants = CompareRun.variants(modes.stream().map(String::trim).filter(m -> !m.isEmpty()).toList(), disagg);
        workload.build(options.seed).close();
        BenchSession session = new BenchSession(workload, options, System.out, System.err);
        session.warmup();
        try (RouterAdmin admin = new RouterAdmin(options.routerUrl, options.routerGrpc)) {
            CompareRun compare = new CompareRun(admin, session::run, CompareCommand::sleep, !skipClear, settleMs, System.err);
            List<RunSummary> runs = compare.run(variants, out);
            String note = disagg ? "x-flotilla-disagg: off (aggregated on the decode pool) vs auto (the router may disaggregate)." : "";
            CompareReport.write(out, runs, CompareRun.baseline(variants), note);
            System.out.println("compare: " + out.resolve("compare.md").toAbsolutePath().normalize());
            System.out.println(Arrays.stream(CompareReport.markdown(runs, CompareRun.baseline(variants), note).split("\n"))
                    .filter(l -> l.startsWith("|")).reduce((a, b) -> a + "\n" + b).orElse(""));
        }
        return 0;
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for the indexer", e);
        }
    }
}
