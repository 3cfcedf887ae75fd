package io.flotilla.bench.workload;

import java.io.IOException;
import java.io.Writer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;

/**
 * A seeded bursty trace in Mooncake JSONL ({@code timestamp} ms, {@code input_length},
 * {@code output_length}, {@code hash_ids}), for {@code bin/flotilla bench --trace}.
 *
 * <p>The request rate is piecewise linear: a list of phases, each holding a rate or ramping linearly
 * from one rate to another ({@code 90s@0.5,45s@0.5-10,90s@10}). Arrivals are a non-homogeneous
 * Poisson process with that rate, drawn by thinning: candidates at the phase maximum λ* with
 * exponential gaps, each kept with probability λ(t)/λ*. Lengths are uniform in
 * [mean·(1 − jitter), mean·(1 + jitter)]. Every request gets fresh hash ids (one per
 * {@code blockTokens} prompt tokens, numbered from 0 across the trace), so no prompt shares a block
 * with another and nothing is served from the prefix cache. Deterministic for a seed.
 */
public final class BurstyTrace {

    /** A phase of {@code seconds} whose rate goes linearly from {@code fromRate} to {@code toRate} requests/s. */
    public record Phase(double seconds, double fromRate, double toRate) {

        public Phase {
            if (!(seconds > 0) || !(fromRate >= 0) || !(toRate >= 0) || Double.isInfinite(fromRate) || Double.isInfinite(toRate)) {
                throw new IllegalArgumentException("a phase needs a positive duration and finite rates >= 0");
            }
        }

        double rateAt(double secondsIn) {
            return fromRate + (toRate - fromRate) * Math.min(1, secondsIn / seconds);
        }

        /** Expected requests in this phase (the area under the rate). */
        public double expectedRequests() {
            return seconds * (fromRate + toRate) / 2;
        }
    }

    /** One request of the trace. */
    public record Row(long timestampMs, int inputLength, int outputLength, long firstHashId, int hashIds) {
    }

    private BurstyTrace() {
    }

    /** Phases from {@code 90s@0.5,45s@0.5-10,…}: duration (s, ms or m suffix; bare = s) @ rate or from-to. */
    public static List<Phase> parsePhases(String spec) {
        List<Phase> out = new ArrayList<>();
        for (String part : spec.split(",")) {
            String p = part.trim();
            int at = p.indexOf('@');
            if (at <= 0) {
                throw new IllegalArgumentException("phase '" + p + "': want DURATION@RATE or DURATION@FROM-TO, e.g. 60s@2 or 30s@2-8");
            }
            double seconds = seconds(p.substring(0, at).trim());
            String rates = p.substring(at + 1).trim();
            int dash = rates.indexOf('-');
            try {
                double from = Double.parseDouble(dash < 0 ? rates : rates.substring(0, dash));
                double to = dash < 0 ? from : Double.parseDouble(rates.substring(dash + 1));
                out.add(new Phase(seconds, from, to));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("phase '" + p + "': rates must be numbers");
            }
        }
        return out;
    }

    private static double seconds(String d) {
        String s = d.toLowerCase(Locale.ROOT);
        try {
            if (s.endsWith("ms")) {
                return Double.parseDouble(s.substring(0, s.length() - 2)) / 1000;
            }
            if (s.endsWith("m")) {
                return Double.parseDouble(s.substring(0, s.length() - 1)) * 60;
            }
            return Double.parseDouble(s.endsWith("s") ? s.substring(0, s.length() - 1) : s);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("phase duration '" + d + "': want e.g. 90s, 500ms or 2m");
        }
    }

    /** The trace's requests in arrival order. */
    public static List<Row> generate(List<Phase> phases, int isl, int osl, double jitter, int blockTokens, long seed) {
        if (isl < 1 || osl < 1 || blockTokens < 1 || !(jitter >= 0 && jitter < 1)) {
            throw new IllegalArgumentException("need isl, osl, block tokens >= 1 and 0 <= jitter < 1");
        }
        SplittableRandom arrivals = new SplittableRandom(seed);
        SplittableRandom lengths = new SplittableRandom(seed ^ 0x9E3779B97F4A7C15L);
        List<Row> rows = new ArrayList<>();
        double phaseStart = 0;
        long nextHashId = 0;
        for (Phase phase : phases) {
            double max = Math.max(phase.fromRate(), phase.toRate());
            double t = 0;
            while (max > 0) {
                t += -Math.log(1 - arrivals.nextDouble()) / max;
                if (t >= phase.seconds()) {
                    break;
                }
                if (arrivals.nextDouble() * max < phase.rateAt(t)) {
                    int in = length(isl, jitter, lengths);
                    int out = length(osl, jitter, lengths);
                    int ids = (in + blockTokens - 1) / blockTokens;
                    rows.add(new Row(Math.round((phaseStart + t) * 1000), in, out, nextHashId, ids));
                    nextHashId += ids;
                }
            }
            phaseStart += phase.seconds();
        }
        return rows;
    }

    private static int length(int mean, double jitter, SplittableRandom random) {
        double v = mean * (1 - jitter + 2 * jitter * random.nextDouble());
        return Math.max(1, (int) Math.round(v));
    }

    /** Writes the rows as Mooncake JSONL. */
    public static void write(List<Row> rows, Writer out) throws IOException {
        StringBuilder line = new StringBuilder(256);
        for (Row r : rows) {
            line.setLength(0);
            line.append("{\"timestamp\": ").append(r.timestampMs()).append(", \"input_length\": ").append(r.inputLength())
                    .append(", \"output_length\": ").append(r.outputLength()).append(", \"hash_ids\": [");
            for (int i = 0; i < r.hashIds(); i++) {
                if (i > 0) {
                    line.append(", ");
                }
                line.append(r.firstHashId() + i);
            }
            line.append("]}\n");
            out.write(line.toString());
        }
    }
}
