package io.flotilla.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.ToDoubleFunction;

/**
 * Side-by-side comparison of runs of the same workload ({@code compare.md}, {@code compare.html},
 * {@code compare.json}). Each cell shows the value and its ratio to the baseline run (value ÷ baseline;
 * for latencies lower is better, for throughput, hit rates and goodput higher is better).
 *
 * <p>ITL is reported as users read it: the percentiles of each request's mean per-token ITL. The pooled gaps
 * between SSE events are shown beside it with their caveat: a client that reads several events in one socket read
 * sees gaps of a few microseconds between them, so below saturation their median is often the read's resolution,
 * not a latency. No ratio is printed against a latency under {@link #RESOLUTION_MS} (it once printed
 * "2,024.57×" against a pooled median of 0.002 ms).
 */
public final class CompareReport {

    /** How a metric's value is printed. */
    enum Unit { NUMBER, PERCENT, COUNT }

    /** Latencies below this many milliseconds are under what the client's socket reads resolve: no ratio to them. */
    static final double RESOLUTION_MS = 0.1;

    /**
     * A compared metric; {@code lowerIsBetter} decides how a ratio is coloured; {@code floor}: values below it are
     * printed as under it, and no ratio is taken to or from them (0: none).
     */
    record Metric(String name, ToDoubleFunction<RunSummary> value, boolean lowerIsBetter, Unit unit, double floor) {

        Metric(String name, ToDoubleFunction<RunSummary> value, boolean lowerIsBetter, Unit unit) {
            this(name, value, lowerIsBetter, unit, unit == Unit.NUMBER && lowerIsBetter ? RESOLUTION_MS : 0);
        }
    }

    /** What the pooled rows mean, printed under the table. */
    static final String POOLED_CAVEAT = "ITL rows: percentiles of each request's mean per-token ITL. Pooled event gaps: "
            + "every gap between SSE events as the client read them; events read together are microseconds apart, so "
            + "their low percentiles measure the client's reads, not the server. Values under " + RESOLUTION_MS
            + " ms are shown as such and get no ratio.";

    static final List<Metric> METRICS = List.of(
            new Metric("TTFT p50 (ms)", s -> s.ttft().percentile(50), true, Unit.NUMBER),
            new Metric("TTFT p99 (ms)", s -> s.ttft().percentile(99), true, Unit.NUMBER),
            new Metric("ITL p50 (ms, mean per request)", s -> s.itlMean().percentile(50), true, Unit.NUMBER),
            new Metric("ITL p99 (ms, mean per request)", s -> s.itlMean().percentile(99), true, Unit.NUMBER),
            new Metric("event gap p50 (ms, pooled)", s -> s.itl().percentile(50), true, Unit.NUMBER),
            new Metric("event gap p99 (ms, pooled)", s -> s.itl().percentile(99), true, Unit.NUMBER),
            new Metric("E2E p50 (ms)", s -> s.e2e().percentile(50), true, Unit.NUMBER),
            new Metric("E2E p99 (ms)", s -> s.e2e().percentile(99), true, Unit.NUMBER),
            new Metric("output tokens/s", RunSummary::outputTokensPerS, false, Unit.NUMBER),
            new Metric("requests/s", RunSummary::requestsPerS, false, Unit.NUMBER),
            new Metric("cache hit rate", RunSummary::cacheHitRate, false, Unit.PERCENT),
            new Metric("oracle hit rate", RunSummary::oracleHitRate, false, Unit.PERCENT),
            new Metric("goodput (req/s)", RunSummary::goodputRps, false, Unit.NUMBER),
            new Metric("SLO attainment", RunSummary::sloAttainment, false, Unit.PERCENT),
            new Metric("queue wait p99 (ms)", s -> s.queueMs().percentile(99), true, Unit.NUMBER),
            new Metric("predicted = actual overlap (share of KV-routed requests)", RunSummary::overlapExactShare, false,
                    Unit.PERCENT),
            new Metric("engine prompt tokens evaluated per request", s -> s.run().engine().evaluatedPerRequest(), true,
                    Unit.NUMBER, 0),
            new Metric("engine reused-token share", s -> s.run().engine().reusedShare(), false, Unit.PERCENT),
            new Metric("worker CPU per request (ms)", RunSummary::workerCpuMsPerRequest, true, Unit.NUMBER),
            new Metric("failed requests", s -> s.failed(), true, Unit.COUNT));

    private CompareReport() {
    }

    /** Writes the three files; {@code baseline} indexes {@code runs}. */
    public static void write(Path dir, List<RunSummary> runs, int baseline, String note) throws IOException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("compare.md"), markdown(runs, baseline, note), StandardCharsets.UTF_8);
        Files.writeString(dir.resolve("compare.html"), html(runs, baseline, note), StandardCharsets.UTF_8);
        List<Map<String, Object>> json = new ArrayList<>();
        for (RunSummary s : runs) {
            json.add(s.toJson());
        }
        Map<String, Object> doc = new LinkedHashMap<>();
        doc.put("baseline", runs.get(baseline).context().label());
        doc.put("runs", json);
        ReportWriter.JSON.writeValue(dir.resolve("compare.json").toFile(), doc);
    }

    public static String markdown(List<RunSummary> runs, int baseline, String note) {
        StringBuilder sb = new StringBuilder("# Flotilla bench compare\n\n");
        RunSummary base = runs.get(baseline);
        sb.append("Workload: ").append(base.run().workload()).append("  \n");
        sb.append("Gateway: ").append(base.context().url()).append(", model ").append(base.context().model()).append("  \n");
        sb.append("Baseline for ratios: **").append(base.context().label()).append("**");
        if (note != null && !note.isEmpty()) {
            sb.append("  \n").append(note);
        }
        sb.append("\n\n| metric |");
        runs.forEach(r -> sb.append(' ').append(r.context().label()).append(" |"));
        sb.append("\n|---|");
        runs.forEach(r -> sb.append("---:|"));
        sb.append('\n');
        for (Metric m : METRICS) {
            sb.append("| ").append(m.name).append(" |");
            double b = m.value.applyAsDouble(base);
            for (RunSummary r : runs) {
                double v = m.value.applyAsDouble(r);
                sb.append(' ').append(value(m, v)).append(" (").append(ratio(m, v, b)).append(") |");
            }
            sb.append('\n');
        }
        sb.append('\n').append(POOLED_CAVEAT).append('\n');
        sb.append("\n| run | router mode | requests | workers (requests) |\n|---|---|---:|---|\n");
        for (RunSummary r : runs) {
            StringBuilder w = new StringBuilder();
            r.workers().forEach((k, v) -> w.append(w.length() == 0 ? "" : ", ").append(k).append(": ").append(v[RunSummary.W_REQUESTS]));
            sb.append("| ").append(r.context().label()).append(" | ").append(r.context().routerMode()).append(" | ")
                    .append(r.requests()).append(" | ").append(w).append(" |\n");
        }
        return sb.toString();
    }

    static String html(List<RunSummary> runs, int baseline, String note) {
        RunSummary base = runs.get(baseline);
        StringBuilder sb = Html.page("Flotilla bench compare");
        sb.append("<p>Workload: ").append(SvgChart.esc(base.run().workload())).append("<br>Gateway: ")
                .append(SvgChart.esc(base.context().url())).append(", model ").append(SvgChart.esc(base.context().model()))
                .append("<br>Baseline for ratios: <b>").append(SvgChart.esc(base.context().label())).append("</b>");
        if (note != null && !note.isEmpty()) {
            sb.append("<br>").append(SvgChart.esc(note));
        }
        sb.append("</p>");
        List<String> header = new ArrayList<>(List.of("metric"));
        runs.forEach(r -> header.add(r.context().label()));
        List<List<String>> rows = new ArrayList<>();
        for (Metric m : METRICS) {
            List<String> row = new ArrayList<>(List.of(m.name));
            double b = m.value.applyAsDouble(base);
            for (RunSummary r : runs) {
                double v = m.value.applyAsDouble(r);
                String cls = Double.isNaN(v) || Double.isNaN(b) || v == b || v < m.floor || b < m.floor ? ""
                        : (v < b) == m.lowerIsBetter ? "better" : "worse";
                row.add("<span class=\"" + cls + "\">" + SvgChart.esc(value(m, v) + " (" + ratio(m, v, b) + ")") + "</span>");
            }
            rows.add(row);
        }
        Html.table(sb, header, rows);
        sb.append("<p>").append(SvgChart.esc(POOLED_CAVEAT)).append("</p>");
        sb.append("<p>Per-run reports: ");
        for (RunSummary r : runs) {
            String dir = RunDirs.dirName(r.context().label());
            sb.append("<a href=\"").append(SvgChart.esc(dir)).append("/report.html\">").append(SvgChart.esc(r.context().label()))
                    .append("</a> ");
        }
        sb.append("</p><div class=\"charts\">");
        List<SvgChart.Series> cdfs = new ArrayList<>();
        runs.forEach(r -> {
            SvgChart.Series c = ReportWriter.cdf(r.context().label(), r.ttft());
            cdfs.add(c);
        });
        sb.append(SvgChart.lines("TTFT CDF", "TTFT (ms)", "fraction of requests", cdfs));
        List<String> labels = runs.stream().map(r -> r.context().label()).toList();
        sb.append(bars("TTFT (ms)", runs, labels, List.of("p50", "p99"), s -> s.ttft().percentile(50), s -> s.ttft().percentile(99)));
        sb.append(bars("ITL, mean per request (ms)", runs, labels, List.of("p50", "p99"), s -> s.itlMean().percentile(50),
                s -> s.itlMean().percentile(99)));
        sb.append(bars("Output tokens per second", runs, labels, List.of("tokens/s"), RunSummary::outputTokensPerS));
        sb.append(bars("Cache hit rate (%)", runs, labels, List.of("measured", "oracle"),
                s -> 100 * s.cacheHitRate(), s -> 100 * s.oracleHitRate()));
        TreeSet<String> workers = new TreeSet<>();
        runs.forEach(r -> workers.addAll(r.workers().keySet()));
        List<String> workerList = new ArrayList<>(workers);
        double[][] perWorker = new double[runs.size()][workerList.size()];
        for (int i = 0; i < runs.size(); i++) {
            for (int w = 0; w < workerList.size(); w++) {
                long[] v = runs.get(i).workers().get(workerList.get(w));
                perWorker[i][w] = v == null ? 0 : v[RunSummary.W_REQUESTS];
            }
        }
        sb.append(SvgChart.bars("Requests per worker", "requests", workerList, labels, perWorker));
        sb.append("</div>");
        return Html.end(sb);
    }

    @SafeVarargs
    private static String bars(String title, List<RunSummary> runs, List<String> labels, List<String> series,
                               ToDoubleFunction<RunSummary>... values) {
        double[][] v = new double[values.length][runs.size()];
        for (int s = 0; s < values.length; s++) {
            for (int r = 0; r < runs.size(); r++) {
                v[s][r] = values[s].applyAsDouble(runs.get(r));
            }
        }
        return SvgChart.bars(title, title, labels, series, v);
    }

    static String value(Metric m, double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        if (v < m.floor) {
            return "<" + ReportWriter.fmt(m.floor);
        }
        return switch (m.unit) {
            case PERCENT -> String.format(Locale.ROOT, "%.1f%%", 100 * v);
            case COUNT -> String.format(Locale.ROOT, "%d", (long) v);
            case NUMBER -> ReportWriter.fmt(v);
        };
    }

    /** {@link #ratio(double, double)}, but {@code –} when either value is under the metric's floor. */
    static String ratio(Metric m, double v, double base) {
        return v < m.floor || base < m.floor ? "–" : ratio(v, base);
    }

    /** {@code v / base} as {@code 1.23×}; {@code –} when either is unknown or the baseline is 0. */
    static String ratio(double v, double base) {
        if (Double.isNaN(v) || Double.isNaN(base) || base == 0) {
            return v == base ? "1.00×" : "–";
        }
        return String.format(Locale.ROOT, "%.2f×", v / base);
    }
}
