package io.flotilla.planner.model;

import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The profile file format (JSON):
 * <pre>
 * {
 *   "name": "simulated-engine",
 *   "kv_tokens": 131072,          // KV capacity of one replica in tokens
 *   "max_concurrency": 256,       // most running requests per replica
 *   "prefill": {"isl": [..], "concurrency": [..], "ttft_ms": [[row per isl], ..]},
 *   "decode":  {"context": [..], "concurrency": [..], "itl_ms": [[row per context], ..]}
 * }
 * </pre>
 */
public final class ProfileJson {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private ProfileJson() {
    }

    public static PerformanceProfile read(Path file) throws IOException {
        return parse(Files.readString(file, StandardCharsets.UTF_8));
    }

    public static PerformanceProfile parse(String json) {
        JsonNode root = JSON.readTree(json);
        JsonNode prefill = required(root, "prefill");
        JsonNode decode = required(root, "decode");
        return new PerformanceProfile(root.has("name") ? root.get("name").stringValue() : "unnamed",
                new Table2D(vector(prefill, "isl"), vector(prefill, "concurrency"), matrix(prefill, "ttft_ms")),
                new Table2D(vector(decode, "context"), vector(decode, "concurrency"), matrix(decode, "itl_ms")),
                required(root, "kv_tokens").asLong(), required(root, "max_concurrency").asInt());
    }

    public static String write(PerformanceProfile p) {
        Map<String, Object> root = new LinkedHashMap<>();
        root.put("name", p.name());
        root.put("kv_tokens", p.kvTokens());
        root.put("max_concurrency", p.maxConcurrency());
        root.put("prefill", table("isl", p.prefillTtftMs(), "ttft_ms"));
        root.put("decode", table("context", p.decodeItlMs(), "itl_ms"));
        return JSON.writerWithDefaultPrettyPrinter().writeValueAsString(root);
    }

    public static void write(PerformanceProfile p, Path file) throws IOException {
        Files.writeString(file, write(p), StandardCharsets.UTF_8);
    }

    private static Map<String, Object> table(String xName, Table2D t, String valueName) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put(xName, t.xs());
        m.put("concurrency", t.ys());
        List<double[]> rows = new ArrayList<>();
        for (double[] row : t.values()) {
            double[] rounded = new double[row.length];
            for (int i = 0; i < row.length; i++) {
                rounded[i] = Math.round(row[i] * 1000) / 1000.0;
            }
            rows.add(rounded);
        }
        m.put(valueName, rows);
        return m;
    }

    private static JsonNode required(JsonNode node, String field) {
        JsonNode v = node.get(field);
        if (v == null || v.isNull()) {
            throw new IllegalArgumentException("profile: missing field '" + field + "'");
        }
        return v;
    }

    private static double[] vector(JsonNode node, String field) {
        JsonNode a = required(node, field);
        double[] out = new double[a.size()];
        for (int i = 0; i < out.length; i++) {
            out[i] = a.get(i).asDouble();
        }
        return out;
    }

    private static double[][] matrix(JsonNode node, String field) {
        JsonNode a = required(node, field);
        double[][] out = new double[a.size()][];
        for (int i = 0; i < out.length; i++) {
            JsonNode row = a.get(i);
            out[i] = new double[row.size()];
            for (int j = 0; j < out[i].length; j++) {
                out[i][j] = row.get(j).asDouble();
            }
        }
        return out;
    }
}
