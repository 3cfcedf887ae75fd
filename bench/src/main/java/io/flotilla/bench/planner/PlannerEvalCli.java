package io.flotilla.bench.planner;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flotilla.bench.workload.BurstyTrace;
import io.flotilla.protocol.v1.WorkerStatus;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * The planner evaluation's tools (bench/planner-eval.sh runs them):
 * <ul>
 *   <li>{@code trace}: writes a seeded bursty Mooncake trace ({@link BurstyTrace}) from phases or a named
 *       shape ({@link TrafficShapes}); {@code shapes} lists the shapes;</li>
 *   <li>{@code azure-sample}, {@code azure-cut}: traces in the Azure LLM inference layout ({@link AzureTraces});</li>
 *   <li>{@code workers}: reads the cluster's membership from Kafka and writes {@code workers.json} for a
 *       bench run directory: worker-seconds over the run ({@link WorkerTimeline});</li>
 *   <li>{@code report}: one markdown table of SLO attainment and worker-seconds for several runs
 *       ({@link EvaluationReport});</li>
 *   <li>{@code suite-report}: one table for the whole suite, every shape against its peak-sized static pool,
 *       with the spread ({@link SuiteReport}).</li>
 * </ul>
 */
@Command(name = "planner-eval", mixinStandardHelpOptions = true, usageHelpWidth = 120,
        subcommands = {PlannerEvalCli.Trace.class, PlannerEvalCli.Shapes.class, AzureCommands.Sample.class, AzureCommands.Cut.class,
                PlannerEvalCli.Workers.class, PlannerEvalCli.Report.class, SuiteReport.Command.class},
        description = "Tools of the planner evaluation: traces, worker-seconds from membership, reports.")
public final class PlannerEvalCli implements Runnable {

    static final ObjectMapper JSON = new ObjectMapper();

    public static void main(String[] args) {
        System.exit(new CommandLine(new PlannerEvalCli()).execute(args));
    }

    @Override
    public void run() {
        new CommandLine(this).usage(System.out);
    }

    @Command(name = "trace", description = "Write a seeded bursty trace (Mooncake JSONL) for bin/flotilla bench --trace.")
    static final class Trace implements Callable<Integer> {
        @Option(names = "--phases",
                description = "Comma-separated DURATION@RATE or DURATION@FROM-TO (linear ramp), e.g. 90s@0.5,45s@0.5-10,90s@10.")
        String phases;
        @Option(names = "--shape", description = "A named shape of the suite instead of --phases (see: planner-eval shapes).")
        String shape;
        @Option(names = "--isl", defaultValue = "2000", description = "Mean prompt tokens (default ${DEFAULT-VALUE}).")
        int isl;
        @Option(names = "--osl", defaultValue = "64", description = "Mean output tokens (default ${DEFAULT-VALUE}).")
        int osl;
        @Option(names = "--jitter", defaultValue = "0.25", description = "Lengths uniform in mean·(1 ± jitter) (default ${DEFAULT-VALUE}).")
        double jitter;
        @Option(names = "--block-tokens", defaultValue = "512", description = "Tokens per hash id; pass the same --trace-block-size to bench (default ${DEFAULT-VALUE}).")
        int blockTokens;
        @Option(names = "--seed", description = "Seed (default: the shape's, or 9).")
        Long seed;
        @Option(names = "--out", required = true, description = "Trace file to write.")
        Path out;

        @Override
        public Integer call() throws IOException {
            if ((phases == null) == (shape == null)) {
                throw new CommandLine.ParameterException(new CommandLine(this), "give exactly one of --phases and --shape");
            }
            TrafficShapes.Shape named = shape == null ? null : TrafficShapes.named(shape);
            List<BurstyTrace.Phase> ps = named != null ? named.phases() : BurstyTrace.parsePhases(phases);
            long s = seed != null ? seed : named != null ? named.seed() : 9;
            List<BurstyTrace.Row> rows = BurstyTrace.generate(ps, isl, osl, jitter, blockTokens, s);
            try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
                BurstyTrace.write(rows, w);
            }
            double seconds = ps.stream().mapToDouble(BurstyTrace.Phase::seconds).sum();
            double peak = ps.stream().mapToDouble(p -> Math.max(p.fromRate(), p.toRate())).max().orElse(0);
            System.out.printf(Locale.ROOT, "%d requests over %.0f s (mean %.2f req/s, peak %.2f req/s, seed %d) → %s%n",
                    rows.size(), seconds, rows.size() / seconds, peak, s, out);
            return 0;
        }
    }

    @Command(name = "shapes", description = "List the suite's traffic shapes: name, length, peak rate, what it is.")
    static final class Shapes implements Callable<Integer> {
        @Option(names = "--names", description = "Only the names, one a line (for scripts).")
        boolean names;

        @Override
        public Integer call() {
            for (TrafficShapes.Shape s : TrafficShapes.all().values()) {
                if (names) {
                    System.out.println(s.name());
                } else {
                    System.out.printf(Locale.ROOT, "%-15s %4.0f s  peak %4.1f req/s  seed %-3d %s%n", s.name(), s.seconds(), s.peakRate(),
                            s.seed(), s.description());
                }
            }
            return 0;
        }
    }

    @Command(name = "workers", description = "Worker-seconds of a bench run, from the cluster's membership (flotilla.workers).")
    static final class Workers implements Callable<Integer> {
        @Option(names = "--kafka", defaultValue = "127.0.0.1:9092", description = "Kafka bootstrap (default ${DEFAULT-VALUE}).")
        String kafka;
        @Option(names = "--run", required = true, description = "Bench run directory (its summary.json gives the window); workers.json goes there.")
        Path run;
        @Option(names = "--model", defaultValue = "flotilla-sim", description = "Model whose workers count (default ${DEFAULT-VALUE}).")
        String model;
        @Option(names = "--step", defaultValue = "5", description = "Seconds between samples of the live-worker series (default ${DEFAULT-VALUE}).")
        int stepSeconds;
        @Option(names = "--launcher-state", description = "The launcher's .flotilla/cluster.properties, read before bin/flotilla down: "
                + "each worker then counts from its process's start, not from its first status.")
        Path launcherState;

        @Override
        public Integer call() throws IOException {
            JsonNode summary = JSON.readTree(run.resolve("summary.json").toFile());
            long from = Instant.parse(summary.get("started_at").asText()).toEpochMilli();
            long to = from + Math.round(summary.get("duration_s").asDouble() * 1000);
            List<WorkerStatus> statuses = MembershipReader.readAll(kafka, Duration.ofSeconds(30));
            WorkerTimeline timeline = WorkerTimeline.of(statuses, model);
            if (launcherState != null) {
                timeline = timeline.withLaunches(workerLaunches(launcherState));
            }
            ObjectNode out = workersJson(timeline, from, to, stepSeconds * 1000L);
            out.put("counted_from", launcherState != null ? "process start" : "first status");
            JSON.writerWithDefaultPrettyPrinter().writeValue(run.resolve("workers.json").toFile(), out);
            System.out.printf(Locale.ROOT, "%s: %.0f worker-seconds over %.0f s (max %d live) from %d statuses%n", run,
                    out.get("live_worker_seconds").asDouble(), (to - from) / 1000.0, out.get("max_live").asInt(), statuses.size());
            return 0;
        }
    }

    /** Start time (epoch ms) of each worker process the launcher's state file records. */
    static Map<String, Long> workerLaunches(Path clusterProperties) throws IOException {
        java.util.Properties p = new java.util.Properties();
        try (var in = Files.newBufferedReader(clusterProperties)) {
            p.load(in);
        }
        Map<String, Long> out = new LinkedHashMap<>();
        for (String name : p.getProperty("services", "").split(",")) {
            String started = p.getProperty(name.trim() + ".started");
            if (name.trim().startsWith("worker-") && started != null) {
                out.put(name.trim(), Long.parseLong(started.trim()));
            }
        }
        return out;
    }

    /** {@code workers.json}: the window, worker-seconds (live and READY), and the live-worker series. */
    static ObjectNode workersJson(WorkerTimeline timeline, long fromMs, long toMs, long stepMs) {
        ObjectNode out = JSON.createObjectNode();
        out.put("from_ms", fromMs);
        out.put("to_ms", toMs);
        out.put("duration_s", (toMs - fromMs) / 1000.0);
        out.put("live_worker_seconds", Math.round(timeline.liveWorkerSeconds(fromMs, toMs) * 10) / 10.0);
        out.put("ready_worker_seconds", Math.round(timeline.readyWorkerSeconds(fromMs, toMs) * 10) / 10.0);
        List<Integer> series = timeline.liveSeries(fromMs, toMs, stepMs);
        out.put("max_live", series.stream().mapToInt(Integer::intValue).max().orElse(0));
        out.put("min_live", series.stream().mapToInt(Integer::intValue).min().orElse(0));
        out.put("series_step_s", stepMs / 1000.0);
        series.forEach(out.putArray("live_series")::add);
        return out;
    }

    @Command(name = "report", description = "Markdown table: SLO attainment and worker-seconds of several evaluated runs.")
    static final class Report implements Callable<Integer> {
        @Option(names = "--run", required = true, paramLabel = "NAME=DIR",
                description = "A configuration and its bench run directory (with workers.json); repeatable, in table order.")
        List<String> runs = new ArrayList<>();
        @Option(names = "--baseline", required = true, description = "NAME of the run whose worker-seconds are 100 % (the peak-sized static pool).")
        String baseline;
        @Option(names = "--slo-ttft-ms", required = true, description = "TTFT target.")
        double ttftMs;
        @Option(names = "--slo-itl-ms", required = true, description = "Mean-ITL target.")
        double itlMs;
        @Option(names = "--phases", description = "The trace's phases (as for trace), for attainment per phase.")
        String phases;
        @Option(names = "--shape", description = "The trace's named shape, for attainment per phase (instead of --phases).")
        String shape;
        @Option(names = "--trace", description = "The trace file: its first timestamp aligns the phases with the replay.")
        Path trace;
        @Option(names = "--out", description = "Markdown file to write (default: standard output).")
        Path out;

        @Override
        public Integer call() throws IOException {
            Map<String, Path> dirs = new LinkedHashMap<>();
            for (String r : runs) {
                int eq = r.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("--run wants NAME=DIR, not " + r);
                }
                dirs.put(r.substring(0, eq), Path.of(r.substring(eq + 1)));
            }
            List<BurstyTrace.Phase> ps = shape != null ? TrafficShapes.named(shape).phases()
                    : phases == null ? List.of() : BurstyTrace.parsePhases(phases);
            double offsetMs = trace == null || ps.isEmpty() ? 0 : firstTimestampMs(trace);
            String md = EvaluationReport.renderDirs(dirs, baseline, ttftMs, itlMs, ps, offsetMs);
            if (out == null) {
                System.out.print(md);
            } else {
                Files.writeString(out, md);
                System.out.println("wrote " + out);
            }
            return 0;
        }

        private static double firstTimestampMs(Path trace) throws IOException {
            try (var lines = Files.lines(trace)) {
                String first = lines.filter(l -> !l.isBlank()).findFirst().orElseThrow(() -> new IOException(trace + " is empty"));
                return JSON.readTree(first).get("timestamp").asDouble();
            }
        }
    }
}
