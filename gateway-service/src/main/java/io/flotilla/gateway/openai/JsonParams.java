package io.flotilla.gateway.openai;

import tools.jackson.databind.JsonNode;

/**
 * Typed, validated reads of one JSON object's fields. Every failure is a 400 {@link ApiError} whose
 * {@code param} is the field's path ({@code prefix + name}) and whose message says what was expected,
 * in OpenAI's wording. A field that is absent or JSON {@code null} reads as "not given".
 */
public final class JsonParams {

    private final JsonNode object;
    private final String prefix;

    /** @param prefix path of the object, e.g. {@code messages[2].} ({@code ""} for the request body) */
    public JsonParams(JsonNode object, String prefix) {
        this.object = object;
        this.prefix = prefix;
    }

    public String path(String name) {
        return prefix + name;
    }

    /** The field's node, or null when absent or JSON null. */
    public JsonNode node(String name) {
        JsonNode n = object.get(name);
        return n == null || n.isNull() ? null : n;
    }

    public boolean given(String name) {
        return node(name) != null;
    }

    public String string(String name) {
        JsonNode n = node(name);
        if (n == null) {
            return null;
        }
        if (!n.isString()) {
            throw wrongType(name, "a string", n);
        }
        return n.stringValue();
    }

    public Boolean bool(String name) {
        JsonNode n = node(name);
        if (n == null) {
            return null;
        }
        if (!n.isBoolean()) {
            throw wrongType(name, "a boolean", n);
        }
        return n.booleanValue();
    }

    /** An integer in {@code [min, max]}. */
    public Long integer(String name, long min, long max) {
        JsonNode n = node(name);
        if (n == null) {
            return null;
        }
        if (!n.isIntegralNumber()) {
            throw wrongType(name, "an integer", n);
        }
        if (!n.canConvertToLong()) {
            throw ApiError.invalid(path(name), "Invalid '" + path(name) + "': integer out of range.");
        }
        long v = n.longValue();
        if (v < min) {
            throw ApiError.invalid(path(name), "Invalid '" + path(name) + "': integer below minimum value. Expected a value >= "
                    + min + ", but got " + v + " instead.");
        }
        if (v > max) {
            throw ApiError.invalid(path(name), "Invalid '" + path(name) + "': integer above maximum value. Expected a value <= "
                    + max + ", but got " + v + " instead.");
        }
        return v;
    }

    /** A number in {@code [min, max]}, or {@code (min, max]} when {@code minExclusive}. */
    public Double number(String name, double min, boolean minExclusive, double max) {
        JsonNode n = node(name);
        if (n == null) {
            return null;
        }
        if (!n.isNumber()) {
            throw wrongType(name, "a number", n);
        }
        double v = n.doubleValue();
        boolean low = minExclusive ? !(v > min) : !(v >= min);
        if (low || !(v <= max)) {
            throw ApiError.invalid(path(name), "Invalid '" + path(name) + "': expected a number in " + (minExclusive ? "(" : "[")
                    + fmt(min) + ", " + fmt(max) + "], but got " + n + " instead.");
        }
        return v;
    }

    public ApiError wrongType(String name, String expected, JsonNode got) {
        return ApiError.invalid(path(name), "Invalid type for '" + path(name) + "': expected " + expected + ", but got "
                + describe(got) + " instead.");
    }

    /** "a string", "an integer", … — how OpenAI names JSON types in its errors. */
    public static String describe(JsonNode n) {
        if (n == null || n.isNull()) {
            return "null";
        }
        if (n.isString()) {
            return "a string";
        }
        if (n.isIntegralNumber()) {
            return "an integer";
        }
        if (n.isNumber()) {
            return "a decimal number";
        }
        if (n.isBoolean()) {
            return "a boolean";
        }
        if (n.isArray()) {
            return "an array";
        }
        return n.isObject() ? "an object" : "an unsupported value";
    }

    private static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
