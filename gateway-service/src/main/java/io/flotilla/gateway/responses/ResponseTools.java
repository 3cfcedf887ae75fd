package io.flotilla.gateway.responses;

import io.flotilla.gateway.jinja.JsonValues;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.FunctionTools;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.openai.ToolsRequest;
import tools.jackson.databind.JsonNode;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A Responses body's {@code tools}, {@code tool_choice} and {@code parallel_tool_calls}: function tools
 * {@code {type: "function", name, description, parameters, strict}} (flat, unlike chat's), as the chat path's
 * tools; hosted tools are refused by name. Stateless.
 */
final class ResponseTools {

    static final Pattern FUNCTION_NAME = Pattern.compile("[a-zA-Z0-9_.-]{1,64}");
    private static final FunctionTools.Wording WORDING = FunctionTools.openAi(".name");

    private ResponseTools() {
    }

    /** Function tools {@code {type: "function", name, description, parameters, strict}}; hosted tools are refused. */
    static ToolsRequest parse(JsonParams p) {
        List<ToolsRequest.Tool> out = FunctionTools.parse(p, WORDING, ResponseTools::tool);
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
                String type = c.string("type");
                if (!"function".equals(type)) {
                    throw ApiError.unsupported("tool_choice.type", "Unsupported 'tool_choice.type': '" + type
                            + "'. Only a named function ({\"type\": \"function\", \"name\": …}) is supported.");
                }
                function = c.string("name");
                if (function == null) {
                    throw ApiError.invalid("tool_choice.name", "Missing required parameter: 'tool_choice.name'.");
                }
                String named = function;
                if (out.stream().noneMatch(t -> t.name().equals(named))) {
                    throw ApiError.invalid("tool_choice.name", "Invalid 'tool_choice': the function '" + function
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
                    + "': hosted tools are not supported; only 'function' tools are.");
        }
        for (String key : t.propertyNames()) {
            if (!Set.of("type", "name", "description", "parameters", "strict").contains(key)) {
                throw ApiError.invalid(p.path(key), "Unrecognized tool field supplied: '" + p.path(key) + "'.");
            }
        }
        String name = p.string("name");
        if (name == null || !FUNCTION_NAME.matcher(name).matches()) {
            throw ApiError.invalid(p.path("name"), "Invalid '" + p.path("name") + "': a function name is 1 to 64 "
                    + "letters, digits, underscores, dots and dashes.");
        }
        String description = p.string("description");
        p.bool("strict");
        JsonNode parameters = p.node("parameters");
        if (parameters != null && !parameters.isObject()) {
            throw p.wrongType("parameters", "a JSON Schema object", parameters);
        }
        Map<String, Object> function = new LinkedHashMap<>();
        function.put("name", name);
        if (description != null) {
            function.put("description", description);
        }
        if (parameters != null) {
            function.put("parameters", JsonValues.toJava(parameters));
        }
        Map<String, Object> template = new LinkedHashMap<>();
        template.put("type", "function");
        template.put("function", function);
        return new ToolsRequest.Tool(name, parameters == null ? null : JsonValues.toJava(parameters), template);
    }

}
