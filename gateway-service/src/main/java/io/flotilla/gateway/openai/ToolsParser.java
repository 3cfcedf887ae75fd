package io.flotilla.gateway.openai;

import io.flotilla.gateway.jinja.JsonValues;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/** Validates a chat request's {@code tools}, {@code tool_choice}, {@code parallel_tool_calls} and {@code response_format}. */
final class ToolsParser {

    private static final Pattern FUNCTION_NAME = Pattern.compile("[a-zA-Z0-9_.-]{1,64}");

    private ToolsParser() {
    }

    private static final FunctionTools.Wording WORDING = FunctionTools.openAi(".function.name");

    static ToolsRequest tools(JsonParams p) {
        List<ToolsRequest.Tool> out = FunctionTools.parse(p, WORDING, ToolsParser::tool);
        Boolean parallel = p.bool("parallel_tool_calls");
        JsonNode choice = p.node("tool_choice");
        ToolsRequest.Choice mode = out.isEmpty() ? ToolsRequest.Choice.NONE : ToolsRequest.Choice.AUTO;
        String function = null;
        if (choice != null) {
            if (choice.isString()) {
                mode = switch (choice.stringValue()) {
                    case "none" -> ToolsRequest.Choice.NONE;
                    case "auto" -> ToolsRequest.Choice.AUTO;
                    case "required" -> ToolsRequest.Choice.REQUIRED;
                    default -> throw ApiError.invalid("tool_choice", "Invalid value for 'tool_choice': '"
                            + choice.stringValue() + "'. Supported values are: 'none', 'auto' and 'required', or a "
                            + "named function.");
                };
            } else if (choice.isObject()) {
                JsonParams c = new JsonParams(choice, "tool_choice.");
                if (!"function".equals(c.string("type"))) {
                    throw ApiError.invalid("tool_choice.type", "Invalid 'tool_choice.type': expected 'function'.");
                }
                JsonNode f = c.node("function");
                function = f == null || !f.isObject() ? null : new JsonParams(f, "tool_choice.function.").string("name");
                if (function == null) {
                    throw ApiError.invalid("tool_choice.function.name", "Missing required parameter: "
                            + "'tool_choice.function.name'.");
                }
                String named = function;
                if (out.stream().noneMatch(t -> t.name().equals(named))) {
                    throw ApiError.invalid("tool_choice", "Invalid 'tool_choice': the function '" + function
                            + "' is not among the tools.");
                }
                mode = ToolsRequest.Choice.FUNCTION;
            } else {
                throw p.wrongType("tool_choice", "a string or an object", choice);
            }
            if (out.isEmpty() && mode != ToolsRequest.Choice.NONE) {
                throw ApiError.invalid("tool_choice", "Invalid 'tool_choice': 'tools' must be given unless tool_choice "
                        + "is 'none'.");
            }
        }
        return new ToolsRequest(out, mode, function, parallel == null || parallel);
    }

    private static ToolsRequest.Tool tool(JsonNode t, String path) {
        if (!t.isObject()) {
            throw ApiError.invalid(path, "Invalid type for '" + path + "': expected an object, but got "
                    + JsonParams.describe(t) + " instead.");
        }
        JsonParams p = new JsonParams(t, path + ".");
        String type = p.string("type");
        if (!"function".equals(type)) {
            throw ApiError.unsupported(p.path("type"), "Unsupported tool type '" + type + "' in '" + path
                    + "': only 'function' tools are supported.");
        }
        JsonNode function = p.node("function");
        if (function == null || !function.isObject()) {
            throw ApiError.invalid(p.path("function"), "Missing required parameter: '" + p.path("function") + "'.");
        }
        JsonParams f = new JsonParams(function, path + ".function.");
        String name = f.string("name");
        if (name == null || !FUNCTION_NAME.matcher(name).matches()) {
            throw ApiError.invalid(f.path("name"), "Invalid '" + f.path("name") + "': a function name is 1 to 64 "
                    + "letters, digits, underscores, dots and dashes.");
        }
        f.string("description");
        f.bool("strict");
        JsonNode parameters = f.node("parameters");
        if (parameters != null && !parameters.isObject()) {
            throw f.wrongType("parameters", "a JSON Schema object", parameters);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> template = (Map<String, Object>) JsonValues.toJava(t);
        return new ToolsRequest.Tool(name, JsonValues.toJava(parameters), template);
    }

    static OutputFormat responseFormat(JsonParams p) {
        JsonNode format = p.node("response_format");
        if (format == null) {
            return OutputFormat.TEXT;
        }
        if (!format.isObject()) {
            throw p.wrongType("response_format", "an object", format);
        }
        JsonParams f = new JsonParams(format, "response_format.");
        String type = f.string("type");
        if (type == null) {
            throw ApiError.invalid("response_format.type", "Missing required parameter: 'response_format.type'.");
        }
        return switch (type) {
            case "text" -> OutputFormat.TEXT;
            case "json_object" -> new OutputFormat(OutputFormat.Kind.JSON_OBJECT, null, null);
            case "json_schema" -> jsonSchema(f);
            default -> throw ApiError.invalid("response_format.type", "Invalid value for 'response_format.type': '" + type
                    + "'. Supported values are: 'text', 'json_object' and 'json_schema'.");
        };
    }

    private static OutputFormat jsonSchema(JsonParams f) {
        JsonNode js = f.node("json_schema");
        if (js == null || !js.isObject()) {
            throw ApiError.invalid("response_format.json_schema", "Missing required parameter: 'response_format.json_schema'.");
        }
        JsonParams s = new JsonParams(js, "response_format.json_schema.");
        String name = s.string("name");
        if (name == null || !FUNCTION_NAME.matcher(name).matches()) {
            throw ApiError.invalid("response_format.json_schema.name", "Invalid 'response_format.json_schema.name': 1 to 64 "
                    + "letters, digits, underscores, dots and dashes.");
        }
        s.string("description");
        s.bool("strict");
        JsonNode schema = s.node("schema");
        if (schema != null && !schema.isObject()) {
            throw s.wrongType("schema", "a JSON Schema object", schema);
        }
        return new OutputFormat(OutputFormat.Kind.JSON_SCHEMA, schema == null ? "{}" : schema.toString(), name);
    }
}
