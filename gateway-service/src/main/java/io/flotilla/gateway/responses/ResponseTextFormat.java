package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.openai.OutputFormat;
import tools.jackson.databind.JsonNode;

/** A Responses body's {@code text} field as the chat path's {@code response_format}. Stateless. */
final class ResponseTextFormat {

    private ResponseTextFormat() {
    }

    /** {@code text}: {@code format} {@code text}, {@code json_object} or {@code json_schema} (flat: name, schema, strict). */
    static OutputFormat parse(JsonParams p) {
        JsonNode text = p.node("text");
        if (text == null) {
            return OutputFormat.TEXT;
        }
        if (!text.isObject()) {
            throw p.wrongType("text", "an object", text);
        }
        JsonParams t = new JsonParams(text, "text.");
        for (String key : text.propertyNames()) {
            if (key.equals("verbosity")) {
                if (!text.get(key).isNull()) {
                    throw ApiError.unsupported("text.verbosity", "Unsupported parameter 'text.verbosity': the model's "
                            + "verbosity cannot be set.");
                }
            } else if (!key.equals("format")) {
                throw ApiError.invalid("text." + key, "Unrecognized request argument supplied: text." + key);
            }
        }
        JsonNode format = t.node("format");
        if (format == null) {
            return OutputFormat.TEXT;
        }
        if (!format.isObject()) {
            throw t.wrongType("format", "an object", format);
        }
        JsonParams f = new JsonParams(format, "text.format.");
        String type = f.string("type");
        if (type == null) {
            throw ApiError.invalid("text.format.type", "Missing required parameter: 'text.format.type'.");
        }
        return switch (type) {
            case "text" -> OutputFormat.TEXT;
            case "json_object" -> new OutputFormat(OutputFormat.Kind.JSON_OBJECT, null, null);
            case "json_schema" -> {
                String name = f.string("name");
                if (name == null || !ResponseTools.FUNCTION_NAME.matcher(name).matches()) {
                    throw ApiError.invalid("text.format.name", "Invalid 'text.format.name': 1 to 64 letters, digits, "
                            + "underscores, dots and dashes.");
                }
                f.string("description");
                f.bool("strict");
                JsonNode schema = f.node("schema");
                if (schema == null || !schema.isObject()) {
                    throw ApiError.invalid("text.format.schema", "Missing required parameter: 'text.format.schema'.");
                }
                yield new OutputFormat(OutputFormat.Kind.JSON_SCHEMA, schema.toString(), name);
            }
            default -> throw ApiError.invalid("text.format.type", "Invalid value for 'text.format.type': '" + type
                    + "'. Supported values are: 'text', 'json_object' and 'json_schema'.");
        };
    }
}
