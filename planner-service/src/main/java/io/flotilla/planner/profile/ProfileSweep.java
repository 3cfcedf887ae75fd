package io.flotilla.planner.profile;

import io.flotilla.planner.model.PerformanceProfile;
import io.flotilla.planner.model.Table2D;

import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * Measures and fits a {@link PerformanceProfile}.
 * <ul>
 *   <li>prefill: for each ISL and concurrency c, requests of max_tokens 1 at c in flight; the cell is the
 *       p90 TTFT;</li>
 *   <li>decode: for each context length and concurrency c, prompts of that length generating
 *       {@code decodeTokens} tokens at c in flight; the cell is the p90 of the per-request mean ITL;</li>
 *   <li>fit: each table is made non-decreasing along both axes (running maximum), because latency does
 *       not fall with more load or longer inputs and {@code PerformanceModel} searches it by bisection;
 *       concurrency columns are divided by {@code replicas} (the sweep's load spreads over that many workers).</li>
 * </ul>
 *
 * @param isl                 prompt lengths of the prefill sweep
 * @param prefillConcurrency  concurrencies of the prefill sweep
 * @param context             context lengths of the decode sweep
 * @param decodeConcurrency   concurrencies of the decode sweep
 * @param decodeTokens        tokens each decode-sweep request generates
 * @param requests            requests per point (at least the concurrency)
 * @param replicas            workers serving the sweep
 * @param kvTokens            KV capacity of one worker in tokens (written to the profile)
 * @param maxConcurrency      most running requests per worker (written to the profile)
 */
public record ProfileSweep(double[] isl, double[] prefillConcurrency, double[] context, double[] decodeConcurrency,
                           int decodeTokens, int requests, int replicas, long kvTokens, int maxConcurrency) {

    public PerformanceProfile run(String name, LoadPoint runner, Consumer<String> progress) {
        double[][] ttft = new double[isl.length][prefillConcurrency.length];
        for (int i = 0; i < isl.length; i++) {
            for (int j = 0; j < prefillConcurrency.length; j++) {
                int c = (int) prefillConcurrency[j];
                List<Measurement> m = runner.run((int) isl[i], 1, c, Math.max(requests, c));
                ttft[i][j] = p90(m.stream().mapToDouble(Measurement::ttftMs).toArray());
                progress.accept(String.format("prefill isl=%d c=%d: TTFT p90 %.1f ms", (int) isl[i], c, ttft[i][j]));
            }
        }
        double[][] itl = new double[context.length][decodeConcurrency.length];
        for (int i = 0; i < context.length; i++) {
            for (int j = 0; j < decodeConcurrency.length; j++) {
                int c = (int) decodeConcurrency[j];
                List<Measurement> m = runner.run((int) context[i], decodeTokens, c, Math.max(requests, c));
                itl[i][j] = p90(m.stream().filter(x -> x.tokens() > 1).mapToDouble(Measurement::itlMs).toArray());
                progress.accept(String.format("decode ctx=%d c=%d: ITL p90 %.2f ms", (int) context[i], c, itl[i][j]));
            }
        }
        return new PerformanceProfile(name, new Table2D(isl, perReplica(prefillConcurrency), monotone(ttft)),
                new Table2D(context, perReplica(decodeConcurrency), monotone(itl)), kvTokens, maxConcurrency);
    }

    private double[] perReplica(double[] concurrency) {
        return Arrays.stream(concurrency).map(c -> c / replicas).toArray();
    }

    /** Running maximum along rows, then along columns; NaN cells (nothing measured) take the previous value. */
    static double[][] monotone(double[][] t) {
        double[][] out = new double[t.length][];
        for (int i = 0; i < t.length; i++) {
            out[i] = new double[t[i].length];
            for (int j = 0; j < t[i].length; j++) {
                double v = Double.isFinite(t[i][j]) ? t[i][j] : 0;
                double left = j > 0 ? out[i][j - 1] : 0;
                double up = i > 0 ? out[i - 1][j] : 0;
                out[i][j] = Math.max(v, Math.max(left, up));
            }
        }
        return out;
    }

    /** Nearest-rank 90th percentile of the finite values; NaN when there are none. */
    static double p90(double[] values) {
        double[] v = Arrays.stream(values).filter(Double::isFinite).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v[Math.max(0, (int) Math.ceil(0.9 * v.length) - 1)];
    }
}
