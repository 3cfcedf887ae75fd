package io.flotilla.bench.planner;

import com.fasterxml.jackson.databind.JsonNode;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * The evaluation suite's table: per shape, the planner's run against the peak-sized static pool's on the
 * same trace — SLO attainment of both, the planner's worker-seconds as a share of the static pool's,
 * its scale events and the period it found — then the spread over the shapes (min / median / max) and
 * the targets. A shape directory holds {@code peak-static/} and {@code planner/}, each with the bench
 * run in {@code bench/} ({@code summary.json}, {@code requests.csv}, {@code workers.json}), optionally
 * {@code load.txt} (load average before and after the run) and, for the planner,
 * {@code decisions.json} ({@code GET /planner/decisions}).
 */
final class SuiteReport {

    /**
     * The planner's targets: SLO attainment of at least 95 % on every shape, and worker-seconds at most 55 % of
     * peak-static's (median over the shapes) and 70 % (any shape).
     */
    static final double MIN_ATTAINMENT = 0.95;
    static final double MAX_MEDIAN_SHARE = 0.55;
    static final double MAX_SHARE = 0.70;

    /** One shape's two runs, as the table needs them. */
    record Row(String shape, String description, int requests, double staticAttainment, int staticWorkers, double staticWs,
               double attainment, int minWorkers, int maxWorkers, double ws, int scaleEvents, String period, String load) {

        double share() {
            return staticWs > 0 ? ws / staticWs : Double.NaN;
        }
    }

    private SuiteReport() {
    }

    static Row load(String shape, String description, Path dir, double ttftMs, double itlMs) throws IOException {
        EvaluationReport.Run base = EvaluationReport.Run.load(dir.resolve("peak-static/bench"));
        EvaluationReport.Run planned = EvaluationReport.Run.load(dir.resolve("planner/bench"));
        JsonNode decisions = readJson(dir.resolve("planner/decisions.json"));
        long from = planned.workers().path("from_ms").asLong();
        long to = planned.workers().path("to_ms").asLong();
        return new Row(shape, description, planned.requests().size(),
                EvaluationReport.attainment(base.requests(), ttftMs, itlMs), base.workers().path("max_live").asInt(),
                base.workers().path("live_worker_seconds").asDouble(),
                EvaluationReport.attainment(planned.requests(), ttftMs, itlMs), planned.workers().path("min_live").asInt(),
                planned.workers().path("max_live").asInt(), planned.workers().path("live_worker_seconds").asDouble(),
                scaleEvents(decisions, from, to), period(decisions, from, to),
                loadOf(dir.resolve("peak-static/load.txt")) + " · " + loadOf(dir.resolve("planner/load.txt")));
    }

    /** Changes of a target between consecutive decisions inside [from, to) (decisions come newest first). */
    static int scaleEvents(JsonNode decisions, long fromMs, long toMs) {
        List<JsonNode> inWindow = window(decisions, fromMs, toMs);
        int events = 0;
        for (int i = 1; i < inWindow.size(); i++) {
            if (!inWindow.get(i).path("targets").equals(inWindow.get(i - 1).path("targets"))) {
                events++;
            }
        }
        return events;
    }

    /** The periods the planner reported during the run ("—" for none), with when it first found each. */
    static String period(JsonNode decisions, long fromMs, long toMs) {
        Map<Long, Long> firstSeen = new LinkedHashMap<>();
        for (JsonNode d : window(decisions, fromMs, toMs)) {
            JsonNode p = d.path("period_s");
            if (p.isNumber()) {
                firstSeen.putIfAbsent(Math.round(p.asDouble()), d.path("ts").asLong());
            }
        }
        if (firstSeen.isEmpty()) {
            return "—";
        }
        return firstSeen.entrySet().stream()
                .map(e -> String.format(Locale.ROOT, "%d s (from +%d s)", e.getKey(), Math.round((e.getValue() - fromMs) / 1000.0)))
                .collect(Collectors.joining(", "));
    }

    private static List<JsonNode> window(JsonNode decisions, long fromMs, long toMs) {
        List<JsonNode> out = new ArrayList<>();
        if (decisions == null) {
            return out;
        }
        decisions.path("decisions").forEach(d -> {
            long ts = d.path("ts").asLong();
            if (ts >= fromMs && ts < toMs) {
                out.add(0, d);
            }
        });
        return out;
    }

    static String render(List<Row> rows, double ttftMs, double itlMs) {
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "SLO: TTFT ≤ %s ms and mean ITL ≤ %s ms per request. Worker-seconds: live workers "
                + "(process start to STOPPED) integrated over the replay; share = planner / peak-static.%n%n",
                EvaluationReport.fmt(ttftMs), EvaluationReport.fmt(itlMs)));
        b.append("| shape | requests | peak-static: workers, SLO | planner SLO | planner workers | planner worker-seconds "
                + "| of peak-static | scale events | period found | load avg (static · planner) |\n");
        b.append("|---|---:|---|---:|---|---:|---:|---:|---|---|\n");
        for (Row r : rows) {
            b.append(String.format(Locale.ROOT, "| %s | %d | %d, %s | **%s** | %d–%d | %.0f of %.0f | **%s** | %d | %s | %s |%n",
                    r.shape(), r.requests(), r.staticWorkers(), EvaluationReport.pct(r.staticAttainment()),
                    EvaluationReport.pct(r.attainment()), r.minWorkers(), r.maxWorkers(), r.ws(), r.staticWs(),
                    EvaluationReport.pct(r.share()), r.scaleEvents(), r.period(), r.load()));
        }
        b.append('\n');
        rows.forEach(r -> b.append("* ").append(r.shape()).append(": ").append(r.description()).append('\n'));
        double[] att = rows.stream().mapToDouble(Row::attainment).sorted().toArray();
        double[] share = rows.stream().mapToDouble(Row::share).sorted().toArray();
        double[] base = rows.stream().mapToDouble(Row::staticAttainment).sorted().toArray();
        b.append("\n| over ").append(rows.size()).append(" shapes | min | median | max |\n|---|---:|---:|---:|\n");
        b.append(spread("planner SLO attainment", att)).append(spread("planner worker-seconds of peak-static", share))
                .append(spread("peak-static SLO attainment", base));
        b.append("\nTargets: SLO attainment ≥ ").append(EvaluationReport.pct(MIN_ATTAINMENT)).append(" on every shape — ")
                .append(verdict(rows.stream().filter(r -> !(r.attainment() >= MIN_ATTAINMENT)).map(Row::shape).toList()))
                .append("; median worker-seconds ≤ ").append(EvaluationReport.pct(MAX_MEDIAN_SHARE)).append(" of peak-static — ")
                .append(share.length == 0 ? "—" : median(share) <= MAX_MEDIAN_SHARE ? "met" : "**not met**")
                .append(String.format(Locale.ROOT, " (%s)", EvaluationReport.pct(median(share))))
                .append("; none above ").append(EvaluationReport.pct(MAX_SHARE)).append(" — ")
                .append(verdict(rows.stream().filter(r -> !(r.share() <= MAX_SHARE)).map(Row::shape).toList())).append(".\n");
        return b.toString();
    }

    private static String spread(String what, double[] sorted) {
        if (sorted.length == 0) {
            return "| " + what + " | — | — | — |\n";
        }
        return String.format(Locale.ROOT, "| %s | %s | %s | %s |%n", what, EvaluationReport.pct(sorted[0]),
                EvaluationReport.pct(median(sorted)), EvaluationReport.pct(sorted[sorted.length - 1]));
    }

    static double median(double[] sorted) {
        if (sorted.length == 0) {
            return Double.NaN;
        }
        int mid = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
    }

    private static String verdict(List<String> failing) {
        return failing.isEmpty() ? "met" : "**not met** by " + String.join(", ", failing);
    }

    private static JsonNode readJson(Path file) throws IOException {
        return Files.isRegularFile(file) ? PlannerEvalCli.JSON.readTree(file.toFile()) : null;
    }

    /** "before → after" 1-minute load averages from load.txt ("before 1.23 0.98 0.75" / "after …"), or "—". */
    static String loadOf(Path file) throws IOException {
        if (!Files.isRegularFile(file)) {
            return "—";
        }
        Map<String, String> m = new LinkedHashMap<>();
        for (String line : Files.readAllLines(file)) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 2) {
                m.put(f[0], f[1]);
            }
        }
        return m.getOrDefault("before", "?") + "→" + m.getOrDefault("after", "?");
    }

    @picocli.CommandLine.Command(name = "suite-report",
            description = "Markdown table of the evaluation suite: every shape's planner run against its peak-static run, with the spread.")
    static final class Command implements Callable<Integer> {
        @Option(names = "--shape", required = true, paramLabel = "NAME=DIR",
                description = "A shape and its directory (with peak-static/ and planner/); repeatable, in table order.")
        List<String> shapes = new ArrayList<>();
        @Option(names = "--slo-ttft-ms", required = true, description = "TTFT target.")
        double ttftMs;
        @Option(names = "--slo-itl-ms", required = true, description = "Mean-ITL target.")
        double itlMs;
        @Option(names = "--out", description = "Markdown file to write (default: standard output).")
        Path out;

        @Override
        public Integer call() throws IOException {
            List<Row> rows = new ArrayList<>();
            for (String s : shapes) {
                int eq = s.indexOf('=');
                if (eq <= 0) {
                    throw new IllegalArgumentException("--shape wants NAME=DIR, not " + s);
                }
                String name = s.substring(0, eq);
                Path dir = Path.of(s.substring(eq + 1));
                if (!Files.isDirectory(dir.resolve("planner/bench")) || !Files.isDirectory(dir.resolve("peak-static/bench"))) {
                    System.err.println("skipping " + name + ": " + dir + " lacks planner/bench or peak-static/bench");
                    continue;
                }
                String description = TrafficShapes.all().containsKey(name) ? TrafficShapes.named(name).description()
                        : "trace replay";
                rows.add(load(name, description, dir, ttftMs, itlMs));
            }
            String md = render(rows, ttftMs, itlMs);
            if (out == null) {
                System.out.print(md);
            } else {
                Files.writeString(out, md);
                System.out.println("wrote " + out);
            }
            return 0;
        }
    }
}
