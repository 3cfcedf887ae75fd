package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.InvalidRequestException;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.JsonNodeFactory;
import tools.jackson.databind.node.ObjectNode;

import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;

/**
 * Structured output of the simulated engine: a JSON value valid for the request's schema, drawn
 * from the request's stream seed (so it is reproducible, and the n choices of a request differ). The
 * engine has no language model to constrain token by token; it writes a valid document directly,
 * which is what a constrained sampler guarantees. Supported JSON Schema: {@code type} (one or a list),
 * {@code properties} (every property is written, so {@code required} always holds),
 * {@code additionalProperties}, {@code items}, {@code minItems}/{@code maxItems}, {@code enum},
 * {@code const}, {@code anyOf}/{@code oneOf} (the first branch), {@code allOf} of one schema, local
 * {@code $ref}s ({@code #/$defs/…}, {@code #/definitions/…}), {@code minimum}/{@code maximum} (and
 * exclusive), {@code minLength}/{@code maxLength}, {@code format} date, date-time, time, email, uuid, uri;
 * annotations are ignored. Anything else ({@code pattern}, {@code not}, {@code if}, …) is refused by
 * name: writing a value the constraint might not accept would be a silent violation.
 */
final class JsonSchemaSampler {

    private static final JsonMapper JSON = JsonMapper.builder().build();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final String[] WORDS = {"alpha", "bravo", "calm", "delta", "ember", "fjord", "glade", "harbor",
            "island", "juniper", "kestrel", "lumen", "meadow", "nimbus", "orchid", "prairie"};
    private static final Set<String> ANNOTATIONS = Set.of("title", "description", "default", "examples", "$schema",
            "$id", "$comment", "deprecated", "readOnly", "writeOnly", "strict", "nullable");
    private static final Set<String> KEYWORDS = Set.of("type", "properties", "required", "additionalProperties",
            "items", "minItems", "maxItems", "enum", "const", "anyOf", "oneOf", "allOf", "$ref", "$defs",
            "definitions", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
            "format");
    private static final Set<String> FORMATS = Set.of("date", "date-time", "time", "email", "uuid", "uri");
    private static final int MAX_DEPTH = 24;

    private final JsonNode root;
    private final SplittableRandom random;

    private JsonSchemaSampler(JsonNode root, long seed) {
        this.root = root;
        this.random = new SplittableRandom(seed);
    }

    /** A JSON document for {@code schemaJson} (JSON text), or any JSON object when it is null. */
    static String sample(String schemaJson, long seed) {
        if (schemaJson == null) {
            ObjectNode o = NODES.objectNode();
            JsonSchemaSampler s = new JsonSchemaSampler(o, seed);
            o.put("result", s.words(1, 24));
            return o.toString();
        }
        JsonNode schema = parse(schemaJson);
        check(schema, "", 0);
        return new JsonSchemaSampler(schema, seed).value(schema, 0).toString();
    }

    /** Parses a schema and checks that this sampler can honour it; the message names the keyword. */
    static void validate(String schemaJson) {
        check(parse(schemaJson), "", 0);
    }

    private static JsonNode parse(String schemaJson) {
        try {
            JsonNode schema = JSON.readTree(schemaJson);
            if (!schema.isObject() && !schema.isBoolean()) {
                throw new InvalidRequestException("json_schema must be a JSON object");
            }
            return schema;
        } catch (JacksonException e) {
            throw new InvalidRequestException("json_schema is not JSON: " + e.getOriginalMessage());
        }
    }

    private static void check(JsonNode schema, String path, int depth) {
        if (schema.isBoolean()) {
            if (!schema.booleanValue()) {
                throw unsupported(path, "false (nothing is valid)");
            }
            return;
        }
        if (!schema.isObject()) {
            throw new InvalidRequestException("json_schema" + path + " must be an object");
        }
        if (depth > MAX_DEPTH) {
            throw unsupported(path, "nesting deeper than " + MAX_DEPTH);
        }
        for (Map.Entry<String, JsonNode> e : schema.properties()) {
            String k = e.getKey();
            if (!KEYWORDS.contains(k) && !ANNOTATIONS.contains(k)) {
                throw unsupported(path + "/" + k, "the keyword '" + k + "'");
            }
        }
        if (schema.has("format") && !FORMATS.contains(schema.path("format").asString(""))) {
            throw unsupported(path + "/format", "format '" + schema.path("format").asString("") + "'");
        }
        if (schema.path("allOf").size() > 1) {
            throw unsupported(path + "/allOf", "allOf with more than one schema");
        }
        for (String k : new String[] {"properties", "$defs", "definitions"}) {
            for (Map.Entry<String, JsonNode> e : schema.path(k).properties()) {
                check(e.getValue(), path + "/" + k + "/" + e.getKey(), depth + 1);
            }
        }
        for (String k : new String[] {"anyOf", "oneOf", "allOf"}) {
            JsonNode list = schema.path(k);
            for (int i = 0; i < list.size(); i++) {
                check(list.get(i), path + "/" + k + "/" + i, depth + 1);
            }
        }
        for (String k : new String[] {"items", "additionalProperties"}) {
            if (schema.path(k).isObject()) {
                check(schema.get(k), path + "/" + k, depth + 1);
            }
        }
        String ref = schema.path("$ref").asString(null);
        if (ref != null && !ref.startsWith("#/$defs/") && !ref.startsWith("#/definitions/")) {
            throw unsupported(path + "/$ref", "the reference '" + ref + "' (only #/$defs/… and #/definitions/…)");
        }
    }

    private static InvalidRequestException unsupported(String path, String what) {
        return new InvalidRequestException("json_schema" + (path.isEmpty() ? "" : " at " + path) + ": " + what
                + " is not supported by the simulated engine's structured output");
    }

    private JsonNode value(JsonNode schema, int depth) {
        if (depth > MAX_DEPTH * 2) {
            throw new InvalidRequestException("json_schema: references nest deeper than " + MAX_DEPTH * 2);
        }
        if (schema.isBoolean() || schema.isEmpty()) {
            return NODES.stringNode(words(1, 24));
        }
        if (schema.has("$ref")) {
            return value(resolve(schema.get("$ref").asString()), depth + 1);
        }
        if (schema.has("const")) {
            return schema.get("const");
        }
        if (schema.has("enum")) {
            JsonNode options = schema.get("enum");
            return options.get(random.nextInt(options.size()));
        }
        for (String k : new String[] {"anyOf", "oneOf", "allOf"}) {
            if (schema.path(k).size() > 0) {
                return value(schema.get(k).get(0), depth + 1);
            }
        }
        String type = type(schema);
        return switch (type) {
            case "object" -> object(schema, depth);
            case "array" -> array(schema, depth);
            case "string" -> NODES.stringNode(string(schema));
            case "integer" -> NODES.numberNode(integer(schema));
            case "number" -> NODES.numberNode(number(schema));
            case "boolean" -> NODES.booleanNode(random.nextBoolean());
            case "null" -> NODES.nullNode();
            default -> throw new InvalidRequestException("json_schema: unknown type '" + type + "'");
        };
    }

    private JsonNode resolve(String ref) {
        String[] parts = ref.substring(2).split("/");
        JsonNode n = root;
        for (String p : parts) {
            n = n.path(p.replace("~1", "/").replace("~0", "~"));
        }
        if (n.isMissingNode()) {
            throw new InvalidRequestException("json_schema: the reference '" + ref + "' names nothing");
        }
        return n;
    }

    private static String type(JsonNode schema) {
        JsonNode t = schema.path("type");
        if (t.isString()) {
            return t.stringValue();
        }
        if (t.isArray() && !t.isEmpty()) {
            for (JsonNode one : t) {
                if (!"null".equals(one.asString(""))) {
                    return one.asString("");
                }
            }
            return "null";
        }
        if (schema.has("properties") || schema.has("additionalProperties")) {
            return "object";
        }
        if (schema.has("items")) {
            return "array";
        }
        return "string";
    }

    private ObjectNode object(JsonNode schema, int depth) {
        ObjectNode o = NODES.objectNode();
        for (Map.Entry<String, JsonNode> e : schema.path("properties").properties()) {
            o.set(e.getKey(), value(e.getValue(), depth + 1));
        }
        return o;
    }

    private ArrayNode array(JsonNode schema, int depth) {
        int min = schema.path("minItems").asInt(1);
        int max = schema.path("maxItems").asInt(Math.max(min, 3));
        int n = Math.max(min, Math.min(max, 1 + random.nextInt(3)));
        ArrayNode a = NODES.arrayNode();
        JsonNode items = schema.path("items");
        for (int i = 0; i < n; i++) {
            a.add(items.isObject() ? value(items, depth + 1) : NODES.stringNode(words(1, 24)));
        }
        return a;
    }

    private String string(JsonNode schema) {
        String format = schema.path("format").asString("");
        String s = switch (format) {
            case "date" -> "2025-0" + (1 + random.nextInt(9)) + "-1" + random.nextInt(10);
            case "date-time" -> "2025-0" + (1 + random.nextInt(9)) + "-1" + random.nextInt(10) + "T12:00:00Z";
            case "time" -> "12:" + (10 + random.nextInt(50)) + ":00";
            case "email" -> WORDS[random.nextInt(WORDS.length)] + "@example.com";
            case "uuid" -> new java.util.UUID(random.nextLong(), random.nextLong()).toString();
            case "uri" -> "https://example.com/" + WORDS[random.nextInt(WORDS.length)];
            default -> words(schema.path("minLength").asInt(0), schema.path("maxLength").asInt(Integer.MAX_VALUE));
        };
        return s;
    }

    /** One to three words, padded or cut to [min, max] characters. */
    private String words(int min, int max) {
        StringBuilder b = new StringBuilder();
        int n = 1 + random.nextInt(3);
        for (int i = 0; i < n; i++) {
            b.append(i == 0 ? "" : " ").append(WORDS[random.nextInt(WORDS.length)]);
        }
        while (b.length() < min) {
            b.append('a');
        }
        return b.length() > max ? b.substring(0, max) : b.toString();
    }

    private long integer(JsonNode schema) {
        double lo = bound(schema, "minimum", "exclusiveMinimum", 0, true);
        double hi = bound(schema, "maximum", "exclusiveMaximum", Math.max(lo, 0) + 100, false);
        long min = (long) Math.ceil(lo);
        long max = (long) Math.floor(hi);
        if (max < min) {
            throw new InvalidRequestException("json_schema: no integer lies in [" + lo + ", " + hi + "]");
        }
        return min + (max == min ? 0 : random.nextLong(Math.min(max - min + 1, 1L << 62)));
    }

    private double number(JsonNode schema) {
        double lo = bound(schema, "minimum", "exclusiveMinimum", 0, true);
        double hi = bound(schema, "maximum", "exclusiveMaximum", Math.max(lo, 0) + 100, false);
        if (hi < lo) {
            throw new InvalidRequestException("json_schema: no number lies in [" + lo + ", " + hi + "]");
        }
        double v = lo + random.nextDouble() * (hi - lo);
        double rounded = Math.round(v * 100) / 100.0; // reads like a number a model would write
        return rounded >= lo && rounded <= hi ? rounded : v;
    }

    /** An inclusive bound from {@code inclusive} or {@code exclusive} (draft 6+ numbers), else {@code otherwise}. */
    private static double bound(JsonNode schema, String inclusive, String exclusive, double otherwise, boolean lower) {
        if (schema.path(exclusive).isNumber()) {
            double e = schema.get(exclusive).doubleValue();
            return lower ? Math.nextUp(e) : Math.nextDown(e);
        }
        return schema.path(inclusive).isNumber() ? schema.get(inclusive).doubleValue() : otherwise;
    }
}
