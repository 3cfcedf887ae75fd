package io.flotilla.protocol.metrics;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;

/**
 * The samples of a Prometheus text exposition (format 0.0.4, as {@code prometheus_client} serves
 * it): {@code name{label="value",...} value [timestamp]} per line, {@code #} lines ignored. Lines
 * that do not parse are skipped, so one odd metric never hides the others.
 *
 * <p>Hand-written on purpose: Prometheus' Java libraries ({@code prometheus-metrics-exposition-textformats},
 * the older {@code simpleclient_common}) only write the text format, and no maintained Java library on
 * Maven Central parses it (the reference parser is Go's {@code expfmt}). The worker needs a handful of
 * gauges and info labels, which this reads; it does not validate the format.
 */
public final class PrometheusText {

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final List<Sample> samples;

    private PrometheusText(List<Sample> samples) {
        this.samples = samples;
    }

    public static PrometheusText parse(String text) {
        List<Sample> out = new ArrayList<>();
        for (String raw : text.split("\n")) {
            String line = raw.strip();
            if (line.isEmpty() || line.startsWith("#")) {
                continue;
            }
            Sample s = parseLine(line);
            if (s != null) {
                out.add(s);
            }
        }
        return new PrometheusText(out);
    }

    public List<Sample> samples() {
        return samples;
    }

    /** Sum over every series of {@code name}, or empty when there is none. */
    public OptionalDouble sum(String name) {
        double sum = 0;
        boolean any = false;
        for (Sample s : samples) {
            if (s.name.equals(name) && !Double.isNaN(s.value)) {
                sum += s.value;
                any = true;
            }
        }
        return any ? OptionalDouble.of(sum) : OptionalDouble.empty();
    }

    /** Mean over every series of {@code name}, or empty when there is none. */
    /**
     * Sum of {@code name}'s samples whose labels include every one of {@code match}; NaN when there is none (a
     * reader of several services tells "not exported" from zero).
     */
    public double sum(String name, Map<String, String> match) {
        double total = 0;
        boolean any = false;
        for (Sample s : samples()) {
            if (s.name().equals(name) && s.labels().entrySet().containsAll(match.entrySet())) {
                total += s.value();
                any = true;
            }
        }
        return any ? total : Double.NaN;
    }

    public OptionalDouble mean(String name) {
        double sum = 0;
        int n = 0;
        for (Sample s : samples) {
            if (s.name.equals(name) && !Double.isNaN(s.value)) {
                sum += s.value;
                n++;
            }
        }
        return n == 0 ? OptionalDouble.empty() : OptionalDouble.of(sum / n);
    }

    /** Labels of the first series of {@code name} (info-style metrics), or null. */
    public Map<String, String> labels(String name) {
        for (Sample s : samples) {
            if (s.name.equals(name)) {
                return s.labels;
            }
        }
        return null;
    }

    private static Sample parseLine(String line) {
        int brace = line.indexOf('{');
        int space = line.indexOf(' ');
        String name;
        Map<String, String> labels = Map.of();
        String rest;
        if (brace >= 0 && (space < 0 || brace < space)) {
            name = line.substring(0, brace);
            labels = new HashMap<>();
            int i = parseLabels(line, brace + 1, labels);
            if (i < 0) {
                return null;
            }
            rest = line.substring(i).strip();
        } else if (space > 0) {
            name = line.substring(0, space);
            rest = line.substring(space + 1).strip();
        } else {
            return null;
        }
        String value = rest.split("\\s+")[0];
        try {
            return new Sample(name, labels, parseValue(value));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** Parses {@code a="x",b="y"}; returns the index after the closing brace, or -1. */
    private static int parseLabels(String line, int i, Map<String, String> into) {
        while (i < line.length()) {
            char c = line.charAt(i);
            if (c == '}') {
                return i + 1;
            }
            if (c == ',' || c == ' ') {
                i++;
                continue;
            }
            int eq = line.indexOf('=', i);
            if (eq < 0 || eq + 1 >= line.length() || line.charAt(eq + 1) != '"') {
                return -1;
            }
            String key = line.substring(i, eq).strip();
            StringBuilder v = new StringBuilder();
            int j = eq + 2;
            for (; j < line.length() && line.charAt(j) != '"'; j++) {
                char d = line.charAt(j);
                if (d == '\\' && j + 1 < line.length()) {
                    char e = line.charAt(++j);
                    v.append(e == 'n' ? '\n' : e);
                } else {
                    v.append(d);
                }
            }
            if (j >= line.length()) {
                return -1;
            }
            into.put(key, v.toString());
            i = j + 1;
        }
        return -1;
    }

    private static double parseValue(String v) {
        return switch (v) {
            case "+Inf", "Inf" -> Double.POSITIVE_INFINITY;
            case "-Inf" -> Double.NEGATIVE_INFINITY;
            case "NaN" -> Double.NaN;
            default -> Double.parseDouble(v);
        };
    }
}
