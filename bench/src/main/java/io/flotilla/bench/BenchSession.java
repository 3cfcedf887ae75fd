package io.flotilla.bench;

import io.flotilla.bench.client.CompletionClient;
import io.flotilla.bench.client.RouterAdmin;
import io.flotilla.bench.client.StreamMeasurement;
import io.flotilla.bench.client.StreamRecorder;
import io.flotilla.bench.report.ReportWriter;
import io.flotilla.bench.report.RunSummary;
import io.flotilla.bench.run.LoadGenerator;
import io.flotilla.bench.run.ProgressLine;
import io.flotilla.bench.run.RunContext;
import io.flotilla.bench.run.RunResult;
import io.flotilla.bench.workload.TokenExpander;
import io.flotilla.bench.workload.Workload;

import java.io.IOException;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * One CLI invocation's runs: resolves the model once, builds a fresh workload per run (same options
 * and seed, hence the same requests), runs it and writes its reports. Ctrl-C stops sending, lets
 * in-flight requests finish for a few seconds and still writes the reports.
 */
final class BenchSession {

    private final WorkloadOptions workload;
    private final RunOptions options;
    private final PrintStream out;
    private final PrintStream err;
    private String model;
    private Boolean returnTokenIds;
    /** Set by Ctrl-C: the current run stops and writes its reports; no further run starts. */
    private volatile boolean stopped;

    BenchSession(WorkloadOptions workload, RunOptions options, PrintStream out, PrintStream err) {
        this.workload = workload;
        this.options = options;
        this.out = out;
        this.err = err;
    }

    String model() {
        if (model == null) {
            model = options.model != null ? options.model : CompletionClient.firstModel(options.url, options.apiKey);
        }
        return model;
    }

    /** The router's mode as {@code GET {router-url}/actuator/router} reports it, or "unknown". */
    String routerMode() {
        return RouterAdmin.routerMode(HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build(), options.routerUrl);
    }

    /**
     * Sends {@code --warmup} unmeasured requests (32 unique tokens each, 4 output tokens, 8 at a time)
     * and waits for them; failures are reported, not fatal.
     */
    void warmup() {
        int n = options.warmup;
        if (n <= 0) {
            return;
        }
        TokenExpander expander = new TokenExpander();
        int failed = 0;
        try (CompletionClient client = new CompletionClient(options.url, model(), options.apiKey, null, false,
                options.requestTimeout)) {
            for (int from = 0; from < n; from += 8) {
                List<CompletableFuture<StreamMeasurement>> batch = new ArrayList<>();
                for (int i = from; i < Math.min(n, from + 8); i++) {
                    int[] prompt = expander.tokens(TokenExpander.derive(TokenExpander.TAG_WARMUP, options.seed, i), 32);
                    batch.add(client.send(prompt, 4, new StreamRecorder(System.nanoTime(), System::nanoTime, false, (t, c) -> { })));
                }
                for (CompletableFuture<StreamMeasurement> f : batch) {
                    if (!f.join().ok()) {
                        failed++;
                    }
                }
            }
        }
        err.println("bench: " + n + " warm-up requests sent" + (failed > 0 ? ", " + failed + " failed" : ""));
    }

    /** Runs the workload once and writes {@code requests.csv}, {@code summary.json}, {@code report.html} to {@code dir}. */
    RunSummary run(String label, String disaggHint, String routerMode, Path dir) throws IOException {
        if (stopped) {
            throw new IllegalStateException("stopped before run '" + label + "'");
        }
        String m = model();
        TierStatsProbe tiers = TierStatsProbe.read(options.routerUrl, options.routerGrpc, err);
        EngineStatsProbe engine = EngineStatsProbe.read(new EngineStatsProbe.Settings(options.gatewayManagementUrl,
                options.routerUrl, options.routerGrpc, options.launcherState, m), err);
        long lruBlocks = options.lruBlocks > 0 ? options.lruBlocks : tiers.capacityBlocks();
        RunContext context = new RunContext(label, options.url, m, routerMode, disaggHint, options.seed,
                options.config().withLruBlocks(lruBlocks), options.queueTimeout, options.tenants, options.priority);
        RunResult result;
        try (Workload w = workload.build(options.seed);
             CompletionClient client = new CompletionClient(options.url, m, options.apiKey, disaggHint,
                     outputTokenIds(w, m), options.requestTimeout, options.queueTimeout)) {
            LoadGenerator generator = new LoadGenerator(context.config(), w, client, options.labeler());
            err.println("bench " + label + ": " + w.describe() + " → " + options.url + " (model " + m + ", router mode "
                    + routerMode + ")");
            CountDownLatch written = new CountDownLatch(1);
            Thread hook = new Thread(() -> {
                stopped = true;
                generator.stop();
                awaitQuietly(written);
            }, "bench-stop");
            Runtime.getRuntime().addShutdownHook(hook);
            try {
                ProgressLine progress = options.quiet ? null : ProgressLine.start(generator, err);
                try {
                    result = generator.run();
                } finally {
                    if (progress != null) {
                        progress.close();
                    }
                }
                result = result.withTierHits(tiers.hitsSince(options.routerUrl, options.routerGrpc, err))
                        .withEngine(engine.since(err));
                RunSummary summary = RunSummary.of(context, result, options.slo());
                ReportWriter.write(dir, summary);
                out.println("bench " + label + ": " + oneLine(summary) + " → " + dir.toAbsolutePath().normalize());
                return summary;
            } finally {
                written.countDown();
                try {
                    Runtime.getRuntime().removeShutdownHook(hook);
                } catch (IllegalStateException shuttingDown) {
                    // The hook is running; it only waited for the reports, which are written.
                }
            }
        }
    }

    /**
     * Whether to ask for the generated token ids: only when the workload uses them and the server takes
     * {@code return_token_ids}; otherwise follow-up turns reuse the previous prompt with substitute ids
     * for its output ({@link io.flotilla.bench.workload.SessionWorkload}).
     */
    private boolean outputTokenIds(Workload w, String model) {
        if (!w.wantsOutputTokenIds()) {
            return false;
        }
        if (returnTokenIds == null) {
            returnTokenIds = CompletionClient.acceptsReturnTokenIds(options.url, model, options.apiKey);
            if (!returnTokenIds) {
                err.println("bench: the server refuses return_token_ids; follow-up turns carry the previous prompt and "
                        + "substitute ids for its output (the previous output is not reused as a prefix)");
            }
        }
        return returnTokenIds;
    }

    static String oneLine(RunSummary s) {
        return String.format(java.util.Locale.ROOT,
                "%d requests, %d ok, %d failed%s; TTFT p50 %s ms p99 %s ms; ITL p50 %s ms (mean per request); %s tok/s; cache hit %s (oracle %s, "
                        + "same-capacity LRU %s; device %s host %s disk %s)",
                s.requests(), s.completed(), s.failed(), s.errorCodes().isEmpty() ? "" : " " + s.errorCodes(),
                ReportWriter.fmt(s.ttft().percentile(50)),
                ReportWriter.fmt(s.ttft().percentile(99)), ReportWriter.fmt(s.itlMean().percentile(50)),
                ReportWriter.fmt(s.outputTokensPerS()), ReportWriter.pct(s.cacheHitRate()), ReportWriter.pct(s.oracleHitRate()),
                ReportWriter.pct(s.lruHitRate()), ReportWriter.pct(s.tierHitRate("device")),
                ReportWriter.pct(s.tierHitRate("host")), ReportWriter.pct(s.tierHitRate("disk"))) + engineLine(s);
    }

    /** The cluster's counters, where it exposed them: predicted = actual overlap, engine reuse, worker CPU. */
    static String engineLine(RunSummary s) {
        io.flotilla.bench.run.EngineCounts e = s.run().engine();
        StringBuilder sb = new StringBuilder();
        if (e.predicted() > 0) {
            sb.append(String.format(java.util.Locale.ROOT, "; predicted = actual overlap %s of %d KV-routed (%d over, %d under)",
                    ReportWriter.pct(e.exactShare()), (long) e.predicted(), (long) e.over(), (long) e.under()));
        }
        if (!Double.isNaN(e.evaluatedPerRequest())) {
            sb.append("; engine evaluated ").append(ReportWriter.fmt(e.evaluatedPerRequest())).append(" prompt tok/request, reused ")
                    .append(ReportWriter.pct(e.reusedShare()));
            if (e.mirrorDisagree() > 0) {
                sb.append(" (mirror disagreed ").append((long) e.mirrorDisagree()).append("×)");
            }
        }
        if (!Double.isNaN(s.workerCpuMsPerRequest())) {
            sb.append("; worker CPU ").append(ReportWriter.fmt(s.workerCpuMsPerRequest())).append(" ms/request");
        }
        return sb.toString();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
