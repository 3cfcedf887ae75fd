package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.TimingEstimate;
import org.apache.commons.math3.stat.regression.SimpleRegression;

import java.util.ArrayDeque;
import java.util.Optional;

/**
 * Learns an external engine's timing online from the requests the worker sends it, in the shape routers
 * price with ({@link TimingEstimate}):
 *
 * <pre>
 * prefill_ms(t) = b·t + c   least squares over (computed prompt tokens, time to first token) of requests that
 *                           had the engine to themselves until their first token (no queueing, no batching)
 * decode_ms(u)  = d1·u + d0 least squares over (KV usage, mean inter-token time) of every request with at
 *                           least two output tokens (one token per step and sequence: the step time)
 * </pre>
 *
 * Each fit keeps the last {@code window} samples (older ones are removed from the regression), so the
 * model follows the engine when its load mix changes. The quadratic terms stay 0: a window of online
 * samples rarely spans enough prompt lengths to separate a·t² from b·t, and a wrong curvature overprices
 * long prompts more than a line underprices them. A negative slope (noise: more tokens are not faster)
 * falls back to the mean, a negative intercept is raised to 0. An estimate is published only once both
 * fits have {@code minSamples}; before that the worker advertises no timing and routers price it by load
 * alone.
 * Thread-safe.
 */
public final class TimingLearner {

    /** One finished request, as the worker measured it. */
    public record Sample(int computedPromptTokens, double firstTokenMs, boolean alone, int outputTokens,
                         double decodeMsPerToken, double kvUsage) {
    }

    private final int window;
    private final int minSamples;
    private final SimpleRegression prefill = new SimpleRegression();
    private final SimpleRegression decode = new SimpleRegression();
    private final ArrayDeque<double[]> prefillWindow = new ArrayDeque<>();
    private final ArrayDeque<double[]> decodeWindow = new ArrayDeque<>();

    public TimingLearner(int window, int minSamples) {
        if (window < 2 || minSamples < 2 || minSamples > window) {
            throw new IllegalArgumentException("need 2 <= minSamples <= window, got " + minSamples + ", " + window);
        }
        this.window = window;
        this.minSamples = minSamples;
    }

    public synchronized void accept(Sample s) {
        if (s.alone() && s.computedPromptTokens() > 0 && s.firstTokenMs() > 0) {
            add(prefill, prefillWindow, s.computedPromptTokens(), s.firstTokenMs());
        }
        if (s.outputTokens() >= 2 && s.decodeMsPerToken() > 0) {
            add(decode, decodeWindow, Math.max(0, Math.min(1, s.kvUsage())), s.decodeMsPerToken());
        }
    }

    private void add(SimpleRegression fit, ArrayDeque<double[]> samples, double x, double y) {
        fit.addData(x, y);
        samples.addLast(new double[]{x, y});
        if (samples.size() > window) {
            double[] old = samples.removeFirst();
            fit.removeData(old[0], old[1]);
        }
    }

    /** The estimate, once both fits are backed by enough samples. */
    public synchronized Optional<TimingEstimate> estimate() {
        int np = prefillWindow.size();
        int nd = decodeWindow.size();
        if (np < minSamples || nd < minSamples) {
            return Optional.empty();
        }
        double[] p = line(prefill, prefillWindow);
        double[] d = line(decode, decodeWindow);
        return Optional.of(new TimingEstimate(0, p[0], p[1], 0, d[0], d[1], np, nd));
    }

    /** Samples behind each fit: {prefill, decode}. */
    public synchronized int[] samples() {
        return new int[]{prefillWindow.size(), decodeWindow.size()};
    }

    /** Slope and intercept of the fit; the mean (slope 0) when all x are equal or the slope is negative. */
    private static double[] line(SimpleRegression fit, ArrayDeque<double[]> samples) {
        double slope = fit.getSlope();
        if (!Double.isFinite(slope) || slope < 0) {
            double mean = 0;
            for (double[] s : samples) {
                mean += s[1];
            }
            return new double[]{0, mean / samples.size()};
        }
        return new double[]{slope, Math.max(0, fit.getIntercept())};
    }
}
