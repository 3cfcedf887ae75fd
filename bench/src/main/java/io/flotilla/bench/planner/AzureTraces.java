package io.flotilla.bench.planner;

import io.flotilla.bench.workload.BurstyTrace;
import io.flotilla.bench.workload.TraceReader;
import io.flotilla.bench.workload.TraceRow;

import java.io.IOException;
import java.io.Writer;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Traces in the layout of the public Azure LLM inference traces of 2023
 * ({@code AzureLLMInferenceTrace_code.csv}, {@code …_conv.csv}): a header
 * {@code TIMESTAMP,ContextTokens,GeneratedTokens}, then one request per row, timestamps as
 * {@code 2023-11-16 18:17:03.9799600} (seven fraction digits, no offset).
 *
 * <ul>
 *   <li>{@link #sample}: a generated trace of that layout, for tests and the evaluation suite when the
 *       real file is not at hand. It imitates what sets the code trace apart from a Poisson process —
 *       requests come in bunches (here: bunches arrive as a Poisson process along a rate envelope, each a
 *       geometric number of requests of mean {@code bunch}, 50 ms apart on average), prompts are
 *       heavy-tailed and capped by the context window (log-normal, median 1,200 tokens, σ 1, at most
 *       7,437, at least 14), outputs short (6 + log-normal of median 12, σ 0.9, at most 700). These are
 *       round numbers read off the published trace's look, not fitted to it; no row comes from it.</li>
 *   <li>{@link #cut}: a window of a real trace made to fit a small cluster: rows from {@code from} for
 *       {@code seconds·compress} of trace time, their arrivals divided by {@code compress}, each row kept
 *       with probability {@code keep} (seeded), so the rate becomes {@code keep·compress} times the
 *       original's.</li>
 * </ul>
 */
public final class AzureTraces {

    /** Timestamps of written traces count from here (an arbitrary date: the sample is not data of that day). */
    static final LocalDateTime EPOCH = LocalDateTime.of(2026, 1, 1, 0, 0);
    private static final DateTimeFormatter TIMESTAMP = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSSSSSS", Locale.ROOT);

    /** One row: arrival in ms from the first, prompt and output tokens. */
    public record Row(double arrivalMs, int contextTokens, int generatedTokens) {
    }

    /** The sample's rate envelope (300 s): two busy spells around a near-idle lull, then a lower level. */
    public static final String SAMPLE_ENVELOPE = "30s@3,40s@3-10,30s@10,20s@10-1,25s@0.3,25s@0.3-13,40s@13,30s@13-4,60s@4";

    private AzureTraces() {
    }

    /** A generated trace along {@code envelope} (phases as {@link BurstyTrace#parsePhases}); deterministic for a seed. */
    public static List<Row> sample(List<BurstyTrace.Phase> envelope, double bunch, long seed) {
        if (!(bunch >= 1)) {
            throw new IllegalArgumentException("mean bunch size must be at least 1, got " + bunch);
        }
        SplittableRandom arrivals = new SplittableRandom(seed);
        SplittableRandom lengths = new SplittableRandom(seed ^ 0x5DEECE66DL);
        List<Row> rows = new ArrayList<>();
        double phaseStart = 0;
        for (BurstyTrace.Phase phase : envelope) {
            double max = Math.max(phase.fromRate(), phase.toRate()) / bunch;
            double t = 0;
            while (max > 0) {
                t += exponential(arrivals, 1 / max);
                if (t >= phase.seconds()) {
                    break;
                }
                double rate = phase.fromRate() + (phase.toRate() - phase.fromRate()) * t / phase.seconds();
                if (arrivals.nextDouble() * max * bunch >= rate) {
                    continue;
                }
                double at = phaseStart + t;
                // Geometric bunch size with mean `bunch`: P(n) = p(1-p)^(n-1), p = 1/bunch.
                int n = 1;
                while (arrivals.nextDouble() >= 1 / bunch) {
                    n++;
                }
                for (int i = 0; i < n; i++) {
                    rows.add(new Row(Math.round(at * 1e6) / 1e3, context(lengths), generated(lengths)));
                    at += exponential(arrivals, 0.05);
                }
            }
            phaseStart += phase.seconds();
        }
        rows.sort((a, b) -> Double.compare(a.arrivalMs(), b.arrivalMs()));
        return rows;
    }

    /** A window of the trace in {@code file} (any layout {@link TraceReader} reads), compressed and thinned. */
    public static List<Row> cut(Path file, double fromSeconds, double seconds, double compress, double keep, long seed) {
        if (!(compress > 0) || !(keep > 0 && keep <= 1) || !(seconds > 0) || !(fromSeconds >= 0)) {
            throw new IllegalArgumentException("need from >= 0, seconds > 0, compress > 0 and 0 < keep <= 1");
        }
        SplittableRandom random = new SplittableRandom(seed);
        double fromMs = fromSeconds * 1000;
        double toMs = fromMs + seconds * compress * 1000;
        List<Row> rows = new ArrayList<>();
        try (TraceReader r = TraceReader.open(file, TraceReader.Format.AUTO, 1000)) {
            while (r.hasNext()) {
                TraceRow row = r.next();
                if (row.arrivalMs() >= toMs) {
                    break;
                }
                if (row.arrivalMs() >= fromMs && random.nextDouble() < keep) {
                    rows.add(new Row((row.arrivalMs() - fromMs) / compress, row.inputLength(), row.outputLength()));
                }
            }
        }
        return rows;
    }

    /** Writes rows in the Azure layout. */
    public static void write(List<Row> rows, Writer out) throws IOException {
        out.write("TIMESTAMP,ContextTokens,GeneratedTokens\n");
        for (Row r : rows) {
            LocalDateTime t = EPOCH.plusNanos(Math.round(r.arrivalMs() * 1e6));
            out.write(TIMESTAMP.format(t) + "," + r.contextTokens() + "," + r.generatedTokens() + "\n");
        }
    }

    /** Requests per second over windows of {@code windowSeconds}, for the highest window: what a static pool must serve. */
    public static double peakRate(List<Row> rows, double windowSeconds) {
        if (rows.isEmpty()) {
            return 0;
        }
        int windows = (int) Math.ceil(rows.get(rows.size() - 1).arrivalMs() / 1000 / windowSeconds) + 1;
        int[] counts = new int[windows];
        for (Row r : rows) {
            counts[(int) (r.arrivalMs() / 1000 / windowSeconds)]++;
        }
        int max = 0;
        for (int c : counts) {
            max = Math.max(max, c);
        }
        return max / windowSeconds;
    }

    private static int context(SplittableRandom random) {
        double v = 1200 * Math.exp(gaussian(random));
        return (int) Math.max(14, Math.min(7437, Math.round(v)));
    }

    private static int generated(SplittableRandom random) {
        double v = 6 + 12 * Math.exp(0.9 * gaussian(random));
        return (int) Math.min(700, Math.round(v));
    }

    private static double exponential(SplittableRandom random, double mean) {
        return -Math.log(1 - random.nextDouble()) * mean;
    }

    /** Standard normal (Box–Muller; one of the pair). */
    private static double gaussian(SplittableRandom random) {
        double u = 1 - random.nextDouble();
        double v = random.nextDouble();
        return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
    }
}
