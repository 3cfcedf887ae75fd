package io.flotilla.worker.engine.sim;

import org.apache.commons.math3.fitting.PolynomialCurveFitter;
import org.apache.commons.math3.fitting.WeightedObservedPoints;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.List;

/**
 * The simulated engine's {@link TimingModel} fitted to a measured performance profile, the JSON that
 * {@code bin/flotilla profile} writes for the planner (see the planner's {@code ProfileJson}), so a simulated fleet
 * runs at the speed of an engine that was measured (llama.cpp here, a GPU engine elsewhere).
 *
 * <ul>
 *   <li>Prefill: least squares of {@code prefill_ms(t) = a·t² + b·t + c} over the profile's TTFT at its lowest
 *       prefill concurrency, one point per prompt length: alone, a request's first token is its prefill step.</li>
 *   <li>Decode: least squares of {@code decode_ms(u) = a·u² + b·u + c} over every ITL point, with
 *       {@code u = concurrency × context / kv_tokens} (the KV share those requests reference), skipping points
 *       past the KV capacity.</li>
 * </ul>
 *
 * The model's shape stays the simulator's: an engine whose step time depends on the batch size more than on KV use
 * (a CPU engine) is fitted as well as that shape allows; {@link Fit#prefillRmsMs()} and {@link Fit#decodeRmsMs()} say
 * how well. Fewer than three points fit a line, one point a constant.
 */
public final class ProfileFit {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private ProfileFit() {
    }

    /**
     * @param model        the fitted coefficients
     * @param prefillRmsMs root mean square error of the prefill fit over its points, in ms
     * @param decodeRmsMs  the same for decode
     * @param prefillPoints points behind the prefill fit
     * @param decodePoints  points behind the decode fit
     */
    public record Fit(TimingModel model, double prefillRmsMs, double decodeRmsMs, int prefillPoints, int decodePoints) {
    }

    /** Whether {@code text} is a profile's JSON (a JSON object) rather than timing properties. */
    public static boolean isProfile(String text) {
        return text.stripLeading().startsWith("{");
    }

    /** Fits a profile's JSON text; a clear {@link IllegalArgumentException} when it is not a usable profile. */
    public static Fit fit(String profileJson) {
        JsonNode root;
        try {
            root = JSON.readTree(profileJson);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("not a JSON performance profile: " + e.getMessage(), e);
        }
        JsonNode prefill = required(root, "prefill");
        JsonNode decode = required(root, "decode");
        double kvTokens = required(root, "kv_tokens").asDouble();
        if (!(kvTokens > 0)) {
            throw new IllegalArgumentException("profile kv_tokens must be positive");
        }
        double[] isl = vector(prefill, "isl");
        double[] prefillConcurrency = vector(prefill, "concurrency");
        double[][] ttft = matrix(prefill, "ttft_ms", isl.length, prefillConcurrency.length);
        int alone = argMin(prefillConcurrency);
        List<double[]> prefillPoints = new ArrayList<>();
        for (int i = 0; i < isl.length; i++) {
            prefillPoints.add(new double[]{isl[i], ttft[i][alone]});
        }
        double[] context = vector(decode, "context");
        double[] decodeConcurrency = vector(decode, "concurrency");
        double[][] itl = matrix(decode, "itl_ms", context.length, decodeConcurrency.length);
        List<double[]> decodePoints = new ArrayList<>();
        for (int i = 0; i < context.length; i++) {
            for (int j = 0; j < decodeConcurrency.length; j++) {
                double u = decodeConcurrency[j] * context[i] / kvTokens;
                if (u <= 1 && Double.isFinite(itl[i][j]) && itl[i][j] > 0) {
                    decodePoints.add(new double[]{u, itl[i][j]});
                }
            }
        }
        if (decodePoints.isEmpty()) {
            throw new IllegalArgumentException("profile has no decode point within its kv_tokens");
        }
        double[] p = quadratic(prefillPoints);
        double[] d = quadratic(decodePoints);
        TimingModel model = new TimingModel(p[2], p[1], p[0], d[2], d[1], d[0]);
        return new Fit(model, rms(prefillPoints, t -> model.prefillMs(Math.round(t))), rms(decodePoints, model::decodeMs),
                prefillPoints.size(), decodePoints.size());
    }

    /** Coefficients c0, c1, c2 of the least-squares polynomial of degree min(2, distinct x − 1). */
    private static double[] quadratic(List<double[]> points) {
        long distinct = points.stream().mapToDouble(pt -> pt[0]).distinct().count();
        int degree = (int) Math.min(2, distinct - 1);
        double[] c = new double[3];
        if (degree == 0) {
            c[0] = points.stream().mapToDouble(pt -> pt[1]).average().orElseThrow();
            return c;
        }
        WeightedObservedPoints obs = new WeightedObservedPoints();
        points.forEach(pt -> obs.add(pt[0], pt[1]));
        double[] fitted = PolynomialCurveFitter.create(degree).fit(obs.toList());
        System.arraycopy(fitted, 0, c, 0, fitted.length);
        return c;
    }

    private static double rms(List<double[]> points, java.util.function.DoubleUnaryOperator model) {
        double sum = 0;
        for (double[] pt : points) {
            double e = model.applyAsDouble(pt[0]) - pt[1];
            sum += e * e;
        }
        return Math.sqrt(sum / points.size());
    }

    private static int argMin(double[] xs) {
        int best = 0;
        for (int i = 1; i < xs.length; i++) {
            if (xs[i] < xs[best]) {
                best = i;
            }
        }
        return best;
    }

    private static JsonNode required(JsonNode node, String field) {
        JsonNode v = node == null ? null : node.get(field);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("profile is missing '" + field + "'");
        }
        return v;
    }

    private static double[] vector(JsonNode node, String field) {
        JsonNode array = required(node, field);
        if (!array.isArray() || array.isEmpty()) {
            throw new IllegalArgumentException("profile '" + field + "' must be a non-empty array");
        }
        double[] out = new double[array.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = array.get(i).asDouble();
        }
        return out;
    }

    private static double[][] matrix(JsonNode node, String field, int rows, int columns) {
        JsonNode array = required(node, field);
        if (array.size() != rows) {
            throw new IllegalArgumentException("profile '" + field + "' has " + array.size() + " rows, expected " + rows);
        }
        double[][] out = new double[rows][columns];
        for (int i = 0; i < rows; i++) {
            JsonNode row = array.get(i);
            if (row.size() != columns) {
                throw new IllegalArgumentException("profile '" + field + "' row " + i + " has " + row.size()
                        + " values, expected " + columns);
            }
            for (int j = 0; j < columns; j++) {
                out[i][j] = row.get(j).asDouble();
            }
        }
        return out;
    }
}
