package io.flotilla.bench.client;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Samples of a Prometheus text exposition ({@code /actuator/prometheus}), as far as counters need: one sample
 * per line {@code name{label="value",…} value [timestamp]}; comments and unparsable lines are skipped.
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
        for (String line : text.split("\n")) {
            String l = line.strip();
            if (l.isEmpty() || l.startsWith("#")) {
                continue;
            }
            Sample s = sample(l);
            if (s != null) {
                out.add(s);
            }
        }
        return new PrometheusText(out);
    }

    /** Sum of {@code name}'s samples whose labels include every one of {@code match}; NaN when none. */
    public double sum(String name, Map<String, String> match) {
        double total = 0;
        boolean any = false;
        for (Sample s : samples) {
            if (s.name.equals(name) && s.labels.entrySet().containsAll(match.entrySet())) {
                total += s.value;
                any = true;
            }
        }
        return any ? total : Double.NaN;
    }

    public List<Sample> samples() {
        return samples;
    }

    private static Sample sample(String l) {
        int brace = l.indexOf('{');
        int space = l.indexOf(' ');
        if (space < 0) {
            return null;
        }
        Map<String, String> labels = new LinkedHashMap<>();
        String name;
        int rest;
        if (brace >= 0 && brace < space) {
            name = l.substring(0, brace);
            int i = brace + 1;
            while (i < l.length() && l.charAt(i) != '}') {
                int eq = l.indexOf('=', i);
                if (eq < 0 || eq + 1 >= l.length() || l.charAt(eq + 1) != '"') {
                    return null;
                }
                String key = l.substring(i, eq).strip();
                StringBuilder v = new StringBuilder();
                int j = eq + 2;
                for (; j < l.length() && l.charAt(j) != '"'; j++) {
                    char c = l.charAt(j);
                    if (c == '\\' && j + 1 < l.length()) {
                        char n = l.charAt(++j);
                        v.append(n == 'n' ? '\n' : n);
                    } else {
                        v.append(c);
                    }
                }
                labels.put(key, v.toString());
                i = j + 1;
                if (i < l.length() && l.charAt(i) == ',') {
                    i++;
                }
            }
            rest = i + 1;
        } else {
            name = l.substring(0, space);
            rest = space;
        }
        String[] parts = l.substring(Math.min(rest, l.length())).strip().split("\\s+");
        try {
            return new Sample(name, labels, Double.parseDouble(parts[0]));
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
