package io.flotilla.gateway.responses;

import io.flotilla.gateway.jinja.JsonValues;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.openai.LogprobsRequest;
import io.flotilla.gateway.openai.OutputFormat;
import io.flotilla.gateway.openai.SamplingParser;
import io.flotilla.gateway.openai.SamplingRequest;
import io.flotilla.gateway.openai.ToolsRequest;
import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validates a {@code POST /v1/responses} body into a {@link ResponsesRequest} whose chat request is the one
 * {@code /v1/chat/completions} would build for the same conversation: {@code instructions} a first system
 * message, the items ({@link ResponseItems}) the messages, function tools the chat path's tools,
 * {@code text.format} its {@code response_format}, {@code max_output_tokens} its output limit, {@code user} (or,
 * without it, {@code safety_identifier}) its tenant. Strict as the chat parser is: an unknown field is 400
 * "Unrecognized request argument supplied", and a field of a feature this server does not have ({@code background},
 * {@code conversation}, {@code prompt}, hosted tools, {@code include}, {@code reasoning.effort}, …) is 400
 * {@code unsupported_parameter} naming it, unless it is sent with its "off" value. Stateless.
 */
public final class ResponsesRequestParser {

    static final int MAX_TOOLS = 128;
    static final int MAX_METADATA = 16;
    private static final Pattern FUNCTION_NAME = Pattern.compile("[a-zA-Z0-9_.-]{1,64}");

    /** Fields read here (the sampling fields as the chat path takes them, vLLM's included). */
    private static final Set<String> FIELDS = Set.of("model", "input", "instructions", "tools", "tool_choice",
            "parallel_tool_calls", "text", "reasoning", "max_output_tokens", "stream", "stream_options", "store",
            "previous_response_id", "metadata", "user", "safety_identifier", "truncation", "service_tier", "include",
            "background", "conversation", "prompt", "prompt_cache_key", "max_tool_calls", "top_logprobs",
            "temperature", "top_p", "top_k", "min_p", "presence_penalty", "frequency_penalty", "repetition_penalty",
            "logit_bias", "seed", "ignore_eos", "stop_token_ids");

    private final JsonMapper json;
    private final ResponseItems items;

    public ResponsesRequestParser(JsonMapper json) {
        this.json = json;
        this.items = new ResponseItems(json);
    }

    /** {@code previous_response_id} alone, checked: read before the rest, to look the stored response up. */
    public static String previousResponseId(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        String id = new JsonParams(body, "").string("previous_response_id");
        if (id != null && id.isBlank()) {
            throw ApiError.invalid("previous_response_id", "Invalid 'previous_response_id': must not be empty.");
        }
        return id;
    }

    /**
     * @param requestId this response's request id (input item ids derive from it)
     * @param previous  the stored response named by {@code previous_response_id}, visible to the caller; null
     *                  when none was named
     */
    public ResponsesRequest parse(JsonNode body, String requestId, StoredResponse previous) {
        previousResponseId(body);
        for (String key : body.propertyNames()) {
            if (!FIELDS.contains(key)) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        JsonParams p = new JsonParams(body, "");
        refuseUnsupported(p);
        String model = p.string("model");
        if (model != null && model.isBlank()) {
            throw ApiError.invalid("model", "Invalid 'model': must not be empty.");
        }
        String instructions = p.string("instructions");
        Long maxOutput = p.integer("max_output_tokens", 1, Integer.MAX_VALUE);
        SamplingRequest sampling = SamplingParser.parse(p);
        boolean stream = Boolean.TRUE.equals(p.bool("stream"));
        streamOptions(p, stream);
        boolean store = !Boolean.FALSE.equals(p.bool("store"));
        String user = p.string("user");
        String safetyIdentifier = p.string("safety_identifier");
        ObjectNode metadata = metadata(p);
        ToolsRequest tools = tools(p);
        OutputFormat format = format(p);
        if (tools.forced() && format.kind() != OutputFormat.Kind.TEXT) {
            throw ApiError.invalid("text.format", "Invalid 'text.format': it cannot be combined with a tool_choice that "
                    + "forces a call, which constrains the answer itself.");
        }

        ArrayNode input = items.input(p.node("input"), "in_" + requestId);
        List<JsonNode> conversation = new ArrayList<>();
        if (previous != null) {
            json.readTree(previous.inputItems()).forEach(conversation::add);
            json.readTree(previous.response()).path("output").forEach(conversation::add);
        }
        input.forEach(conversation::add);
        List<ChatMessage> messages = ResponseItems.messages(instructions, conversation);
        String tenant = user != null && !user.isBlank() ? user : safetyIdentifier;
        CompletionRequest completion = new CompletionRequest(CompletionKind.CHAT, model, messages, null, null,
                maxOutput == null ? null : maxOutput.intValue(), List.of(), sampling, 1, tenant, stream, false, tools,
                format, LogprobsRequest.OFF);

        ObjectNode echo = json.createObjectNode();
        echo.put("instructions", instructions);
        echo.put("max_output_tokens", maxOutput);
        echo.set("metadata", metadata);
        echo.put("parallel_tool_calls", tools.parallel());
        echo.put("previous_response_id", previous == null ? null : previous.id());
        echo.putObject("reasoning").putNull("effort").putNull("summary");
        echo.put("store", store);
        echo.put("temperature", sampling.temperature());
        echo.put("top_p", sampling.topP());
        ObjectNode text = echo.putObject("text");
        text.set("format", p.node("text") != null && p.node("text").has("format") ? p.node("text").get("format")
                : json.createObjectNode().put("type", "text"));
        echo.set("tool_choice", p.node("tool_choice") != null ? p.node("tool_choice")
                : json.getNodeFactory().stringNode(tools.tools().isEmpty() ? "none" : "auto"));
        echo.set("tools", p.node("tools") != null ? p.node("tools") : json.createArrayNode());
        echo.put("truncation", "disabled");
        echo.put("user", user);
        echo.put("safety_identifier", safetyIdentifier);
        echo.put("service_tier", "default");
        return new ResponsesRequest(completion, copy(input), conversation, echo, store,
                previous);
    }

    private static List<JsonNode> copy(ArrayNode array) {
        List<JsonNode> out = new ArrayList<>(array.size());
        array.forEach(out::add);
        return out;
    }

    /** Features this server does not have: a 400 naming each, unless sent with its "off" value. */
    private static void refuseUnsupported(JsonParams p) {
        if (Boolean.TRUE.equals(p.bool("background"))) {
            throw ApiError.unsupported("background", "Unsupported parameter 'background': responses run in the "
                    + "foreground only; use stream: true to see output as it is made.");
        }
        for (String field : List.of("conversation", "prompt", "prompt_cache_key", "max_tool_calls")) {
            if (p.given(field)) {
                throw ApiError.unsupported(field, "Unsupported parameter '" + field + "': "
                        + switch (field) {
                            case "conversation" -> "conversations are not supported; continue a stored response with "
                                    + "'previous_response_id'.";
                            case "prompt" -> "stored prompt templates are not supported; send 'instructions' and 'input'.";
                            case "prompt_cache_key" -> "requests are placed by the KV they share, without a cache key.";
                            default -> "hosted tools are not supported, and function calls are not capped.";
                        });
            }
        }
        JsonNode include = p.node("include");
        if (include != null && (!include.isArray() || !include.isEmpty())) {
            throw ApiError.unsupported("include", "Unsupported parameter 'include': no additional output data "
                    + "(encrypted reasoning, log-probabilities, hosted tools' results) is available.");
        }
        Long top = p.integer("top_logprobs", 0, 20);
        if (top != null && top > 0) {
            throw ApiError.unsupported("top_logprobs", "Unsupported parameter 'top_logprobs' on /v1/responses: "
                    + "log-probabilities are returned by /v1/chat/completions.");
        }
        String truncation = p.string("truncation");
        if (truncation != null && !truncation.equals("disabled")) {
            throw ApiError.unsupported("truncation", "Unsupported value for 'truncation': '" + truncation + "'. Only "
                    + "'disabled' is supported: a conversation longer than the model's context is refused, never cut.");
        }
        String tier = p.string("service_tier");
        if (tier != null && !tier.equals("auto") && !tier.equals("default")) {
            throw ApiError.unsupported("service_tier", "Unsupported value for 'service_tier': '" + tier
                    + "'. This server has one tier ('auto' or 'default').");
        }
        JsonNode reasoning = p.node("reasoning");
        if (reasoning != null) {
            if (!reasoning.isObject()) {
                throw p.wrongType("reasoning", "an object", reasoning);
            }
            for (String key : reasoning.propertyNames()) {
                if (!reasoning.get(key).isNull()) {
                    throw ApiError.unsupported("reasoning." + key, "Unsupported parameter 'reasoning." + key + "': "
                            + "the model reasons as its chat template tells it; its reasoning comes back as reasoning "
                            + "items, and no effort or summary can be set.");
                }
            }
        }
    }

    private static void streamOptions(JsonParams p, boolean stream) {
        JsonNode options = p.node("stream_options");
        if (options == null) {
            return;
        }
        if (!stream) {
            throw ApiError.invalid("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
        }
        if (!options.isObject()) {
            throw p.wrongType("stream_options", "an object", options);
        }
        for (String key : options.propertyNames()) {
            JsonNode v = options.get(key);
            if (!key.equals("include_obfuscation") || v.isBoolean() && v.booleanValue()) {
                throw ApiError.unsupported("stream_options." + key, "Unsupported parameter 'stream_options." + key
                        + "': events are not padded against side channels here; send include_obfuscation: false.");
            }
        }
    }

    /** Up to 16 string pairs (keys up to 64 characters, values up to 512), returned as sent. */
    private ObjectNode metadata(JsonParams p) {
        JsonNode metadata = p.node("metadata");
        ObjectNode out = json.createObjectNode();
        if (metadata == null) {
            return out;
        }
        if (!metadata.isObject()) {
            throw p.wrongType("metadata", "an object", metadata);
        }
        if (metadata.size() > MAX_METADATA) {
            throw ApiError.invalid("metadata", "Invalid 'metadata': at most " + MAX_METADATA + " pairs are allowed.");
        }
        for (Map.Entry<String, JsonNode> e : metadata.properties()) {
            if (e.getKey().length() > 64 || !e.getValue().isString() || e.getValue().stringValue().length() > 512) {
                throw ApiError.invalid("metadata", "Invalid 'metadata." + e.getKey() + "': keys are strings of at most "
                        + "64 characters, values strings of at most 512.");
            }
            out.put(e.getKey(), e.getValue().stringValue());
        }
        return out;
    }

    /** Function tools {@code {type: "function", name, description, parameters, strict}}; hosted tools are refused. */
    private static ToolsRequest tools(JsonParams p) {
        JsonNode tools = p.node("tools");
        List<ToolsRequest.Tool> out = new ArrayList<>();
        if (tools != null) {
            if (!tools.isArray()) {
                throw p.wrongType("tools", "an array", tools);
            }
            if (tools.size() > MAX_TOOLS) {
                throw ApiError.invalid("tools", "Invalid 'tools': at most " + MAX_TOOLS + " tools are allowed.");
            }
            Set<String> names = new HashSet<>();
            for (int i = 0; i < tools.size(); i++) {
                ToolsRequest.Tool tool = tool(tools.get(i), "tools[" + i + "]");
                if (!names.add(tool.name())) {
                    throw ApiError.invalid("tools[" + i + "].name", "Invalid 'tools': the function name '" + tool.name()
                            + "' is used twice.");
                }
                out.add(tool);
            }
        }
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
        Map<String, Object> function = new java.util.LinkedHashMap<>();
        function.put("name", name);
        if (description != null) {
            function.put("description", description);
        }
        if (parameters != null) {
            function.put("parameters", JsonValues.toJava(parameters));
        }
        Map<String, Object> template = new java.util.LinkedHashMap<>();
        template.put("type", "function");
        template.put("function", function);
        return new ToolsRequest.Tool(name, parameters == null ? null : JsonValues.toJava(parameters), template);
    }

    /** {@code text}: {@code format} {@code text}, {@code json_object} or {@code json_schema} (flat: name, schema, strict). */
    private static OutputFormat format(JsonParams p) {
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
                if (name == null || !FUNCTION_NAME.matcher(name).matches()) {
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
