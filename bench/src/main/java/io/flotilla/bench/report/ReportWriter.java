package io.flotilla.bench.report;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import io.flotilla.bench.run.RequestResult;
import io.flotilla.bench.stats.LatencyStats;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes a run's {@code requests.csv}, {@code summary.json} and {@code report.html} into a directory.
 * The HTML is self-contained (inline CSS and SVG, no script, no network): summary tables, TTFT CDF,
 * TTFT and end-to-end latency over time, output tokens and finished requests per second, requests and
 * prompt/cached tokens per worker.
 */
public final class ReportWriter {

    static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final int MAX_POINTS = 3000;

    private ReportWriter() {
    }

    public static void write(Path dir, RunSummary s) throws IOException {
        Files.createDirectories(dir);
        RequestsCsv.write(dir.resolve("requests.csv"), s.run().requests());
        JSON.writeValue(dir.resolve("summary.json").toFile(), s.toJson());
        Files.writeString(dir.resolve("report.html"), html(s), StandardCharsets.UTF_8);
    }

    static String html(RunSummary s) {
        StringBuilder sb = Html.page("Flotilla bench — " + s.context().label());
        Html.table(sb, List.of("run", ""), List.of(
                List.of("workload", s.run().workload()),
                List.of("gateway", s.context().url()),
                List.of("model", s.context().model()),
                List.of("router mode", s.context().routerMode()),
                List.of("disaggregation hint", s.context().disaggHint() == null ? "(not sent)" : s.context().disaggHint()),
                List.of("started", s.run().startedAt().toString()),
                List.of("duration", fmt(s.durationS()) + " s (" + s.run().stopReason() + ")"),
                List.of("requests", s.requests() + " sent, " + s.completed() + " ok, " + s.failed() + " failed")));
        sb.append("<h2>Latency (ms, ok requests)</h2>");
        Html.table(sb, List.of("metric", "p50", "p90", "p99", "mean", "samples"), List.of(
                latencyRow("TTFT", s.ttft()),
                latencyRow("ITL (chunk gaps, pooled)", s.itl()),
                latencyRow("ITL mean per request (per token)", s.itlMean()),
                latencyRow("end-to-end", s.e2e()),
                latencyRow("queue wait in the gateway", s.queueMs())));
        sb.append("<h2>Throughput and cache</h2>");
        Html.table(sb, List.of("metric", "value"), List.of(
                List.of("output tokens/s", fmt(s.outputTokensPerS())),
                List.of("requests/s (ok)", fmt(s.requestsPerS())),
                List.of("goodput (req/s meeting SLOs)", fmt(s.goodputRps())),
                List.of("SLO attainment", s.slo().defined() ? pct(s.sloAttainment()) + sloText(s) : "(no SLO given)"),
                List.of("prompt tokens (usage)", Long.toString(s.promptTokens())),
                List.of("cached tokens (usage)", Long.toString(s.cachedTokens())),
                List.of("cache hit rate", pct(s.cacheHitRate())),
                List.of("oracle hit rate (block " + s.context().config().blockSize() + ")", pct(s.oracleHitRate())),
                List.of("same-capacity LRU hit rate (" + s.run().lruCapacityBlocks() + " blocks)", pct(s.lruHitRate())),
                List.of("hit rate by tier: device / host / disk", pct(s.tierHitRate("device")) + " / "
                        + pct(s.tierHitRate("host")) + " / " + pct(s.tierHitRate("disk"))),
                List.of("largest dispatch lag", fmt(s.run().maxDispatchLagMs()) + " ms")));
        sb.append("<p class=\"note\">Cache hit rate = cached / prompt tokens as the engines report them. The oracle is the best "
                + "any router could reach with unlimited cache: tokens in leading blocks whose whole prefix appeared in an earlier "
                + "request, at most (prompt length − 1) tokens in whole blocks, over the token ids actually sent. The same-capacity LRU "
                + "credits the same way from one LRU cache as large as every worker's device, host and disk tiers together. Hit "
                + "rates by tier are the tokens the workers reused from the device or onboarded from host memory or disk "
                + "(WorkerService.GetKvTierStats before and after the run).</p>");
        sb.append("<div class=\"charts\">");
        sb.append(SvgChart.lines("TTFT CDF", "TTFT (ms)", "fraction of requests", List.of(cdf("TTFT", s.ttft()))));
        sb.append(overTime(s.run().requests()));
        sb.append(perSecond("Output tokens per second", "tokens/s", s.run().tokensPerSecond()));
        sb.append(perSecond("Requests finished per second", "requests/s", s.run().finishedPerSecond()));
        List<String> workers = new ArrayList<>(s.workers().keySet());
        double[] req = new double[workers.size()];
        double[] prompt = new double[workers.size()];
        double[] cached = new double[workers.size()];
        for (int i = 0; i < workers.size(); i++) {
            long[] w = s.workers().get(workers.get(i));
            req[i] = w[RunSummary.W_REQUESTS];
            prompt[i] = w[RunSummary.W_PROMPT];
            cached[i] = w[RunSummary.W_CACHED];
        }
        sb.append(SvgChart.bars("Requests per worker", "requests", workers, List.of("requests"), new double[][] {req}));
        sb.append(SvgChart.bars("Prompt and cached tokens per worker", "tokens", workers, List.of("prompt tokens", "cached tokens"),
                new double[][] {prompt, cached}));
        sb.append("</div><h2>Outcomes</h2>");
        List<List<String>> outcomes = new ArrayList<>();
        s.outcomes().forEach((k, v) -> outcomes.add(List.of(k, Long.toString(v))));
        Html.table(sb, List.of("outcome", "requests"), outcomes);
        counts(sb, "Failures by error code", "code", s.errorCodes());
        counts(sb, "How workers were chosen (x-flotilla-mode)", "mode", s.modes());
        groups(sb, "Per tenant", "tenant", s.byTenant(), s.durationS());
        groups(sb, "Per priority band", "band", s.byBand(), s.durationS());
        return Html.end(sb);
    }

    private static void counts(StringBuilder sb, String title, String what, java.util.Map<String, Long> counts) {
        if (counts.isEmpty()) {
            return;
        }
        sb.append("<h2>").append(title).append("</h2>");
        List<List<String>> rows = new ArrayList<>();
        counts.forEach((k, v) -> rows.add(List.of(k, Long.toString(v))));
        Html.table(sb, List.of(what, "requests"), rows);
    }

    private static void groups(StringBuilder sb, String title, String what, java.util.Map<String, RunSummary.Group> groups,
                               double durationS) {
        if (groups.isEmpty()) {
            return;
        }
        sb.append("<h2>").append(title).append("</h2>");
        List<List<String>> rows = new ArrayList<>();
        groups.forEach((k, g) -> rows.add(List.of(k, Long.toString(g.requests()), Long.toString(g.completed()),
                Long.toString(g.requests() - g.completed()), fmt(g.ttft().percentile(50)), fmt(g.ttft().percentile(99)),
                fmt(g.queueMs().percentile(99)), fmt(durationS <= 0 ? Double.NaN : g.sloMet() / durationS))));
        Html.table(sb, List.of(what, "requests", "ok", "failed", "TTFT p50 (ms)", "TTFT p99 (ms)", "queue p99 (ms)",
                "goodput (req/s)"), rows);
    }

    static SvgChart.Series cdf(String name, LatencyStats stats) {
        double[] v = stats.sortedValues();
        int stride = SvgChart.stride(v.length, 500);
        int n = v.length == 0 ? 0 : (v.length - 1) / stride + 2;
        double[] xs = new double[n];
        double[] ys = new double[n];
        int k = 0;
        for (int i = 0; i < v.length && k < n - 1; i += stride) {
            xs[k] = v[i];
            ys[k++] = (i + 1.0) / v.length;
        }
        if (v.length > 0) {
            xs[k] = v[v.length - 1];
            ys[k++] = 1.0;
        }
        return new SvgChart.Series(name, java.util.Arrays.copyOf(xs, k), java.util.Arrays.copyOf(ys, k), false);
    }

    private static String overTime(List<RequestResult> rows) {
        List<RequestResult> ok = rows.stream().filter(RequestResult::ok).toList();
        int stride = SvgChart.stride(ok.size(), MAX_POINTS);
        int n = (ok.size() + stride - 1) / stride;
        double[] t = new double[n];
        double[] ttft = new double[n];
        double[] e2e = new double[n];
        for (int i = 0, k = 0; k < n; i += stride, k++) {
            RequestResult r = ok.get(i);
            t[k] = r.sent().sentMs() / 1000.0;
            ttft[k] = r.timing().ttftMs();
            e2e[k] = r.timing().e2eMs();
        }
        return SvgChart.lines("Latency over time (by send time)", "time since start (s)", "ms",
                List.of(new SvgChart.Series("TTFT", t, ttft, true), new SvgChart.Series("end-to-end", t, e2e, true)));
    }

    private static String perSecond(String title, String unit, long[] perSecond) {
        double[] xs = new double[perSecond.length];
        double[] ys = new double[perSecond.length];
        for (int i = 0; i < perSecond.length; i++) {
            xs[i] = i + 0.5;
            ys[i] = perSecond[i];
        }
        return SvgChart.lines(title, "time since start (s)", unit, List.of(new SvgChart.Series(unit, xs, ys, false)));
    }

    private static List<String> latencyRow(String name, LatencyStats st) {
        return List.of(name, fmt(st.percentile(50)), fmt(st.percentile(90)), fmt(st.percentile(99)), fmt(st.mean()),
                Long.toString(st.count()));
    }

    private static String sloText(RunSummary s) {
        return " (TTFT ≤ " + (s.slo().ttftMs() == null ? "∞" : fmt(s.slo().ttftMs())) + " ms, mean ITL ≤ "
                + (s.slo().itlMs() == null ? "∞" : fmt(s.slo().itlMs())) + " ms)";
    }

    public static String fmt(double v) {
        if (Double.isNaN(v)) {
            return "–";
        }
        return Math.abs(v) >= 100 ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.2f", v);
    }

    public static String pct(double v) {
        return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.1f%%", v * 100);
    }
}
