package io.flotilla.bench.planner;

import com.fasterxml.jackson.databind.JsonNode;
import io.flotilla.bench.workload.BurstyTrace;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The planner evaluation's table. Per configuration (one bench run directory each, with
 * {@code summary.json}, {@code requests.csv} and the {@code workers.json} of
 * {@code planner-eval workers}): SLO attainment = requests that completed ok with TTFT ≤ the TTFT
 * target and mean ITL ≤ the ITL target / all requests sent (failures are misses; a request with
 * fewer than two tokens has no ITL and meets that part), the same for each target alone, latency
 * percentiles of ok requests, and worker-seconds against the baseline run's.
 */
public final class EvaluationReport {

    /** One request of requests.csv: when it was scheduled (ms from the run start), whether it completed, its latencies. */
    record Request(double scheduledMs, boolean ok, double ttftMs, double itlMeanMs) {
    }

    /** What the report needs of one run. */
    record Run(JsonNode summary, List<Request> requests, JsonNode workers) {

        static Run load(Path dir) throws IOException {
            JsonNode summary = PlannerEvalCli.JSON.readTree(dir.resolve("summary.json").toFile());
            JsonNode workers = PlannerEvalCli.JSON.readTree(dir.resolve("workers.json").toFile());
            return new Run(summary, EvaluationReport.requests(Files.readString(dir.resolve("requests.csv"))), workers);
        }
    }

    /** Traces with more phases than this get a row per {@link #WINDOW_S} instead of one per phase. */
    static final int MAX_PHASE_ROWS = 12;
    static final double WINDOW_S = 30;

    private EvaluationReport() {
    }

    /** {from s, to s, from rate, to rate} of each phase. */
    private static List<double[]> phaseWindows(List<BurstyTrace.Phase> phases) {
        List<double[]> out = new ArrayList<>();
        double start = 0;
        for (BurstyTrace.Phase p : phases) {
            out.add(new double[] {start, start + p.seconds(), p.fromRate(), p.toRate()});
            start += p.seconds();
        }
        return out;
    }

    /** Windows of {@link #WINDOW_S} over the phases' length. */
    private static List<double[]> fixedWindows(List<BurstyTrace.Phase> phases) {
        double total = phases.stream().mapToDouble(BurstyTrace.Phase::seconds).sum();
        List<double[]> out = new ArrayList<>();
        for (double start = 0; start < total; start += WINDOW_S) {
            out.add(new double[] {start, Math.min(total, start + WINDOW_S), 0, 0});
        }
        return out;
    }

    static String renderDirs(Map<String, Path> dirs, String baseline, double ttftMs, double itlMs,
                             List<BurstyTrace.Phase> phases, double phaseOffsetMs) throws IOException {
        Map<String, Run> runs = new LinkedHashMap<>();
        for (Map.Entry<String, Path> e : dirs.entrySet()) {
            runs.put(e.getKey(), Run.load(e.getValue()));
        }
        return render(runs, baseline, ttftMs, itlMs, phases, phaseOffsetMs);
    }

    static String render(Map<String, Run> runs, String baseline, double ttftMs, double itlMs,
                         List<BurstyTrace.Phase> phases, double phaseOffsetMs) {
        Run base = runs.get(baseline);
        if (base == null) {
            throw new IllegalArgumentException("--baseline " + baseline + " is not one of the runs " + runs.keySet());
        }
        double baseWs = base.workers().get("live_worker_seconds").asDouble();
        StringBuilder b = new StringBuilder();
        b.append(String.format(Locale.ROOT, "SLO: TTFT ≤ %s ms and mean ITL ≤ %s ms per request.%n%n", fmt(ttftMs), fmt(itlMs)));
        b.append("| configuration | workers (min–max) | requests | failed | SLO attainment | TTFT ok | ITL ok "
                + "| TTFT p50 / p99 | mean ITL p50 / p99 | worker-seconds | vs ").append(baseline).append(" |\n");
        b.append("|---|---|---:|---:|---:|---:|---:|---|---|---:|---:|\n");
        for (Map.Entry<String, Run> e : runs.entrySet()) {
            Run r = e.getValue();
            List<Request> all = r.requests();
            double ws = r.workers().get("live_worker_seconds").asDouble();
            b.append(String.format(Locale.ROOT, "| %s | %d–%d | %d | %d | **%s** | %s | %s | %s / %s ms | %s / %s ms | %.0f | %s |%n",
                    e.getKey(), r.workers().get("min_live").asInt(), r.workers().get("max_live").asInt(), all.size(),
                    all.stream().filter(q -> !q.ok()).count(),
                    pct(attainment(all, ttftMs, itlMs)), pct(attainment(all, ttftMs, Double.POSITIVE_INFINITY)),
                    pct(attainment(all, Double.POSITIVE_INFINITY, itlMs)),
                    fmt(r.summary().path("ttft_ms").path("p50").asDouble()), fmt(r.summary().path("ttft_ms").path("p99").asDouble()),
                    fmt(r.summary().path("itl_mean_ms").path("p50").asDouble()), fmt(r.summary().path("itl_mean_ms").path("p99").asDouble()),
                    ws, baseWs > 0 ? pct(ws / baseWs) : "—"));
        }
        if (!phases.isEmpty()) {
            boolean byPhase = phases.size() <= MAX_PHASE_ROWS;
            b.append(byPhase ? "\nSLO attainment per phase of the trace:\n\n| phase |"
                    : "\nSLO attainment per " + fmt(WINDOW_S) + " s of the trace:\n\n| window |");
            runs.keySet().forEach(n -> b.append(' ').append(n).append(" |"));
            b.append("\n|---|");
            runs.keySet().forEach(n -> b.append("---:|"));
            b.append('\n');
            for (double[] w : byPhase ? phaseWindows(phases) : fixedWindows(phases)) {
                double from = w[0] * 1000 - phaseOffsetMs;
                double to = w[1] * 1000 - phaseOffsetMs;
                b.append(String.format(Locale.ROOT, "| %.0f–%.0f s", w[0], w[1]));
                b.append(byPhase ? ", " + (w[2] == w[3] ? fmt(w[2]) : fmt(w[2]) + "→" + fmt(w[3])) + " req/s |" : " |");
                for (Run r : runs.values()) {
                    List<Request> in = r.requests().stream().filter(q -> q.scheduledMs() >= from && q.scheduledMs() < to).toList();
                    b.append(' ').append(in.isEmpty() ? "—" : pct(attainment(in, ttftMs, itlMs)) + " of " + in.size()).append(" |");
                }
                b.append('\n');
            }
        }
        b.append("\nLive workers every ").append(fmt(base.workers().path("series_step_s").asDouble())).append(" s:\n\n");
        for (Map.Entry<String, Run> e : runs.entrySet()) {
            List<String> series = new ArrayList<>();
            e.getValue().workers().path("live_series").forEach(n -> series.add(n.asText()));
            b.append("* ").append(e.getKey()).append(": `").append(String.join(" ", series)).append("`\n");
        }
        return b.toString();
    }

    /** Requests meeting both targets / all requests (failures are misses; no ITL meets the ITL part). */
    static double attainment(List<Request> requests, double ttftMs, double itlMs) {
        if (requests.isEmpty()) {
            return Double.NaN;
        }
        long met = requests.stream().filter(q -> q.ok() && q.ttftMs() <= ttftMs
                && (Double.isNaN(q.itlMeanMs()) || q.itlMeanMs() <= itlMs)).count();
        return (double) met / requests.size();
    }

    /** requests.csv rows (RequestsCsv's columns, looked up by name; quoted cells may hold commas, quotes and newlines). */
    static List<Request> requests(String csv) {
        List<List<String>> rows = rows(csv);
        if (rows.isEmpty()) {
            return List.of();
        }
        List<String> header = rows.get(0);
        int scheduled = column(header, "scheduled_ms");
        int outcome = column(header, "outcome");
        int ttft = column(header, "ttft_ms");
        int itl = column(header, "itl_mean_ms");
        List<Request> out = new ArrayList<>();
        for (List<String> c : rows.subList(1, rows.size())) {
            if (c.size() == 1 && c.get(0).isEmpty()) {
                continue;
            }
            out.add(new Request(number(c.get(scheduled)), "ok".equals(c.get(outcome)), number(c.get(ttft)), number(c.get(itl))));
        }
        return out;
    }

    private static int column(List<String> header, String name) {
        int i = header.indexOf(name);
        if (i < 0) {
            throw new IllegalArgumentException("requests.csv has no column " + name);
        }
        return i;
    }

    private static double number(String cell) {
        return cell.isEmpty() ? Double.NaN : Double.parseDouble(cell);
    }

    /** CSV text as rows of cells (RFC 4180 quoting). */
    static List<List<String>> rows(String csv) {
        List<List<String>> rows = new ArrayList<>();
        List<String> row = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < csv.length(); i++) {
            char ch = csv.charAt(i);
            if (quoted) {
                if (ch == '"' && i + 1 < csv.length() && csv.charAt(i + 1) == '"') {
                    cell.append('"');
                    i++;
                } else if (ch == '"') {
                    quoted = false;
                } else {
                    cell.append(ch);
                }
            } else if (ch == '"') {
                quoted = true;
            } else if (ch == ',') {
                row.add(cell.toString());
                cell.setLength(0);
            } else if (ch == '\n') {
                row.add(cell.toString());
                cell.setLength(0);
                rows.add(row);
                row = new ArrayList<>();
            } else if (ch != '\r') {
                cell.append(ch);
            }
        }
        if (cell.length() > 0 || !row.isEmpty()) {
            row.add(cell.toString());
            rows.add(row);
        }
        return rows;
    }

    static String pct(double v) {
        return Double.isNaN(v) ? "—" : String.format(Locale.ROOT, "%.1f%%", v * 100);
    }

    static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "—";
        }
        return v == Math.rint(v) && Math.abs(v) < 1e9 ? Long.toString((long) v) : String.format(Locale.ROOT, "%.1f", v);
    }
}
