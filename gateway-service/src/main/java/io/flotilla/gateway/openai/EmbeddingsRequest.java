package io.flotilla.gateway.openai;

import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * A {@code POST /v1/embeddings} body in OpenAI's shape. {@code input} is a string, an array of strings, an array of
 * token ids or an array of token-id arrays; every input is embedded separately, in order. Strict like the completion
 * parser: an unknown field is a 400 naming it.
 *
 * @param model      the model asked for; null for the gateway's default
 * @param texts      the inputs as text, or null when they came as token ids
 * @param tokens     the inputs as token ids, or null when they came as text
 * @param base64     {@code encoding_format} {@code base64}: each vector as little-endian float32 bytes, base64
 * @param dimensions the vector length asked for, or null for the model's own
 * @param user       the end user (the tenant of accounting and routing), or null
 */
public record EmbeddingsRequest(String model, List<String> texts, List<int[]> tokens, boolean base64, Integer dimensions,
                                String user) {

    private static final Set<String> FIELDS = Set.of("input", "model", "encoding_format", "dimensions", "user");
    /** OpenAI's limit on inputs in one request. */
    static final int MAX_INPUTS = 2048;

    public int inputs() {
        return texts != null ? texts.size() : tokens.size();
    }

    public static EmbeddingsRequest parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        for (String key : body.propertyNames()) {
            if (!FIELDS.contains(key)) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        JsonParams p = new JsonParams(body, "");
        String model = p.given("model") ? p.string("model") : null;
        String format = p.given("encoding_format") ? p.string("encoding_format") : "float";
        if (!format.equals("float") && !format.equals("base64")) {
            throw ApiError.invalid("encoding_format", "Invalid 'encoding_format': '" + format
                    + "'. Expected 'float' or 'base64'.");
        }
        Long dims = p.integer("dimensions", 1, Integer.MAX_VALUE);
        String user = p.given("user") ? p.string("user") : null;
        JsonNode input = p.node("input");
        if (input == null) {
            throw ApiError.invalid("input", "Missing required parameter: 'input'.");
        }
        List<String> texts = null;
        List<int[]> tokens = null;
        if (input.isString()) {
            texts = List.of(nonEmpty(input.stringValue(), "input"));
        } else if (!input.isArray()) {
            throw p.wrongType("input", "a string, an array of strings, an array of token ids or an array of token-id "
                    + "arrays", input);
        } else if (input.isEmpty()) {
            throw ApiError.invalid("input", "Invalid 'input': empty array. Expected at least one input.");
        } else if (input.size() > MAX_INPUTS) {
            throw ApiError.invalid("input", "Invalid 'input': " + input.size() + " inputs, at most " + MAX_INPUTS
                    + " are allowed.");
        } else if (input.get(0).isString()) {
            texts = new ArrayList<>(input.size());
            for (int i = 0; i < input.size(); i++) {
                JsonNode t = input.get(i);
                if (!t.isString()) {
                    throw mixed(i, t);
                }
                texts.add(nonEmpty(t.stringValue(), "input[" + i + "]"));
            }
        } else if (input.get(0).isArray()) {
            tokens = new ArrayList<>(input.size());
            for (int i = 0; i < input.size(); i++) {
                JsonNode t = input.get(i);
                if (!t.isArray()) {
                    throw mixed(i, t);
                }
                tokens.add(ids(t, "input[" + i + "]"));
            }
        } else {
            tokens = List.of(ids(input, "input"));
        }
        return new EmbeddingsRequest(model, texts, tokens, format.equals("base64"), dims == null ? null : dims.intValue(),
                user);
    }

    private static String nonEmpty(String text, String where) {
        if (text.isEmpty()) {
            throw ApiError.invalid("input", "Invalid '" + where + "': empty string. Expected a non-empty input.");
        }
        return text;
    }

    private static int[] ids(JsonNode array, String where) {
        if (array.isEmpty()) {
            throw ApiError.invalid("input", "Invalid '" + where + "': empty array. Expected at least one token id.");
        }
        int[] ids = new int[array.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = array.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0) {
                throw ApiError.invalid("input", "Invalid '" + where + "[" + i + "]': expected a non-negative token id, but "
                        + "got " + JsonParams.describe(t) + (t.isNumber() ? " " + t : "") + " instead.");
            }
            ids[i] = t.intValue();
        }
        return ids;
    }

    private static ApiError mixed(int i, JsonNode t) {
        return ApiError.invalid("input", "Invalid 'input[" + i + "]': every input must be of the same kind as the first "
                + "(a string or an array of token ids), but got " + JsonParams.describe(t) + " instead.");
    }
}
