package io.flotilla.gateway.jinja;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * JSON as templates see it: what Python's {@code json.loads} gives transformers — objects as maps in
 * their key order, arrays as lists, integers as {@code Long} (or {@code BigInteger}), other numbers as
 * {@code Double}, strings, booleans and null.
 */
public final class JsonValues {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    private JsonValues() {
    }

    public static Object toJava(JsonNode n) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            return null;
        }
        if (n.isObject()) {
            Map<String, Object> m = new LinkedHashMap<>();
            for (Map.Entry<String, JsonNode> e : n.properties()) {
                m.put(e.getKey(), toJava(e.getValue()));
            }
            return m;
        }
        if (n.isArray()) {
            List<Object> l = new ArrayList<>(n.size());
            for (JsonNode e : n) {
                l.add(toJava(e));
            }
            return l;
        }
        if (n.isIntegralNumber()) {
            return n.canConvertToLong() ? (Object) n.longValue() : n.bigIntegerValue();
        }
        if (n.isNumber()) {
            return n.doubleValue();
        }
        if (n.isBoolean()) {
            return n.booleanValue();
        }
        return n.asString();
    }

    /** {@code text} parsed as JSON, or {@code text} itself when it is not JSON. */
    public static Object parseOrKeep(String text) {
        try {
            return toJava(JSON.readTree(text));
        } catch (JacksonException e) {
            return text;
        }
    }
}
