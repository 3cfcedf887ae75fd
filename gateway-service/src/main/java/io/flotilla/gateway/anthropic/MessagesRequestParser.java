package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.jinja.JsonValues;
import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.CompletionRequest;
import io.flotilla.gateway.openai.FunctionTools;
import io.flotilla.gateway.openai.JsonParams;
import io.flotilla.gateway.openai.LogprobsRequest;
import io.flotilla.gateway.openai.OutputFormat;
import io.flotilla.gateway.openai.SamplingRequest;
import io.flotilla.gateway.openai.ToolsRequest;
import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validates a {@code /v1/messages} body into a {@link MessagesRequest} whose chat request is the one
 * {@code /v1/chat/completions} would build for the same conversation: {@code system} becomes a system
 * message, a user message's {@code tool_result} blocks become tool messages (in block order), an
 * assistant message's {@code tool_use} blocks its tool calls and its {@code thinking} blocks its
 * reasoning, {@code tools} function tools (their {@code input_schema} the parameters), {@code tool_choice}
 * {@code auto}/{@code any}/{@code tool}/{@code none} the chat path's auto/required/function/none,
 * {@code stop_sequences} stop strings and {@code metadata.user_id} the tenant. Strict as the chat parser
 * is: an unknown field, a wrong type, a value out of Anthropic's range, or a feature the engine path does
 * not have (images, documents, server tools, a thinking budget, an assistant prefill) is a 400 naming
 * it. Whether the model's engines honour each sampling field is checked later, per model, as for chat.
 * Stateless.
 */
public final class MessagesRequestParser {

    /** Most stop sequences per request (the chat path's limit on stop strings). */
    static final int MAX_STOP_SEQUENCES = 16;
    private static final Pattern TOOL_NAME = Pattern.compile("[a-zA-Z0-9_-]{1,128}");

    /** Top-level fields read here; anything else is "Extra inputs are not permitted". */
    private static final Set<String> FIELDS = Set.of("model", "messages", "max_tokens", "system", "stop_sequences",
            "stream", "temperature", "top_p", "top_k", "tools", "tool_choice", "thinking", "metadata", "service_tier");
    /** The fields of {@code /v1/messages/count_tokens}: what shapes the prompt. */
    private static final Set<String> COUNT_FIELDS = Set.of("model", "messages", "system", "tools", "tool_choice", "thinking");
    /** Anthropic fields of features the engine path does not have: always a 400 naming them. */
    private static final Map<String, String> UNSUPPORTED = Map.of(
            "container", "code-execution containers are not supported",
            "mcp_servers", "MCP servers are not supported",
            "context_management", "context management is not supported",
            "output_format", "structured output formats are not supported on /v1/messages",
            "output_config", "output configuration is not supported on /v1/messages",
            "inference_geo", "inference geography is not supported");

    /** A {@code /v1/messages} body. */
    public MessagesRequest parse(JsonNode body) {
        return parse(body, FIELDS);
    }

    /**
     * A {@code /v1/messages/count_tokens} body: the prompt's fields only; the request it makes is the one
     * {@code /v1/messages} would make of them, without an output limit.
     */
    public MessagesRequest parseCountTokens(JsonNode body) {
        return parse(body, COUNT_FIELDS);
    }

    private MessagesRequest parse(JsonNode body, Set<String> fields) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        for (String key : body.propertyNames()) {
            if (UNSUPPORTED.containsKey(key) && !body.get(key).isNull()) {
                throw ApiError.unsupported(key, key + ": " + UNSUPPORTED.get(key) + ".");
            }
            if (!fields.contains(key) && !UNSUPPORTED.containsKey(key)) {
                throw ApiError.invalid(key, key + ": Extra inputs are not permitted");
            }
        }
        JsonParams p = new JsonParams(body, "");
        String model = p.string("model");
        if (model != null && model.isBlank()) {
            throw ApiError.invalid("model", "model: must not be empty.");
        }
        Long maxTokens = p.integer("max_tokens", 1, Integer.MAX_VALUE);
        if (maxTokens == null && fields.contains("max_tokens")) {
            throw ApiError.invalid("max_tokens", "max_tokens: Field required");
        }
        Double temperature = p.number("temperature", 0, false, 1);
        Double topP = p.number("top_p", 0, false, 1);
        Long topK = p.integer("top_k", 0, Integer.MAX_VALUE);
        SamplingRequest sampling = new SamplingRequest(temperature, topP, topK == null ? null : topK.intValue(), null,
                null, null, null, Map.of(), null, false, List.of());
        serviceTier(p);
        List<ChatMessage> messages = new ArrayList<>();
        system(p, messages);
        ContentBlocks.messages(p, messages);
        ToolsRequest tools = tools(p);
        MessagesRequest.Thinking thinking = thinking(p);
        boolean stream = Boolean.TRUE.equals(p.bool("stream"));
        CompletionRequest completion = new CompletionRequest(CompletionKind.CHAT, model, messages, null, null,
                maxTokens == null ? null : maxTokens.intValue(), stopSequences(p), sampling, 1, user(p), stream, false, tools,
                OutputFormat.TEXT, LogprobsRequest.OFF);
        return new MessagesRequest(completion, thinking);
    }

    /** {@code system}: a string or an array of text blocks, one system message first. */
    private static void system(JsonParams p, List<ChatMessage> messages) {
        JsonNode system = p.node("system");
        if (system == null) {
            return;
        }
        String text = system.isString() ? system.stringValue() : ContentBlocks.texts(p, "system", system);
        messages.add(new ChatMessage("system", null, text));
    }

    private static List<String> stopSequences(JsonParams p) {
        JsonNode stop = p.node("stop_sequences");
        List<String> out = new ArrayList<>();
        if (stop == null) {
            return out;
        }
        if (!stop.isArray()) {
            throw p.wrongType("stop_sequences", "an array of strings", stop);
        }
        for (int i = 0; i < stop.size(); i++) {
            JsonNode s = stop.get(i);
            if (!s.isString() || s.stringValue().isEmpty()) {
                throw ApiError.invalid("stop_sequences", "stop_sequences." + i + ": expected a non-empty string.");
            }
            out.add(s.stringValue());
        }
        if (out.size() > MAX_STOP_SEQUENCES) {
            throw ApiError.invalid("stop_sequences", "stop_sequences: at most " + MAX_STOP_SEQUENCES + " are allowed.");
        }
        return out;
    }

    /** {@code metadata.user_id}: the tenant, as the chat path's {@code user}. */
    private static String user(JsonParams p) {
        JsonNode metadata = p.node("metadata");
        if (metadata == null) {
            return null;
        }
        if (!metadata.isObject()) {
            throw p.wrongType("metadata", "an object", metadata);
        }
        for (String key : metadata.propertyNames()) {
            if (!key.equals("user_id")) {
                throw ApiError.invalid("metadata." + key, "metadata." + key + ": Extra inputs are not permitted");
            }
        }
        return new JsonParams(metadata, "metadata.").string("user_id");
    }

    /** {@code service_tier}: {@code auto} and {@code standard_only} both mean the one tier there is. */
    private static void serviceTier(JsonParams p) {
        String tier = p.string("service_tier");
        if (tier != null && !tier.equals("auto") && !tier.equals("standard_only")) {
            throw ApiError.invalid("service_tier", "service_tier: Input should be 'auto' or 'standard_only'");
        }
    }

    /**
     * {@code thinking}: {@code adaptive} and {@code disabled} are checked against the model once it is known;
     * {@code enabled} needs a {@code budget_tokens} that no engine here can hold the model's thinking to.
     */
    private static MessagesRequest.Thinking thinking(JsonParams p) {
        JsonNode thinking = p.node("thinking");
        if (thinking == null) {
            return MessagesRequest.Thinking.UNSET;
        }
        if (!thinking.isObject()) {
            throw p.wrongType("thinking", "an object", thinking);
        }
        String type = new JsonParams(thinking, "thinking.").string("type");
        if (type == null) {
            throw ApiError.invalid("thinking.type", "thinking.type: Field required");
        }
        return switch (type) {
            case "adaptive" -> MessagesRequest.Thinking.ADAPTIVE;
            case "disabled" -> MessagesRequest.Thinking.DISABLED;
            case "enabled" -> throw ApiError.unsupported("thinking.budget_tokens", "thinking.budget_tokens: a thinking "
                    + "budget cannot be enforced by this server's engines. Use thinking {\"type\": \"adaptive\"} (the model "
                    + "thinks as its chat template tells it, bounded by max_tokens) or leave 'thinking' out.");
            default -> throw ApiError.invalid("thinking.type", "thinking.type: Input should be 'enabled', 'adaptive' or "
                    + "'disabled'");
        };
    }

    /** Anthropic's paths ({@code tools.0.name}) and wording. */
    private static final FunctionTools.Wording WORDING = new FunctionTools.Wording(i -> "tools." + i,
            item -> item + ".name", "tools: at most " + FunctionTools.MAX_TOOLS + " tools are allowed.",
            name -> "tools: Tool names must be unique ('" + name + "' is used twice).");

    private static ToolsRequest tools(JsonParams p) {
        List<ToolsRequest.Tool> out = FunctionTools.parse(p, WORDING, MessagesRequestParser::tool);
        JsonNode choice = p.node("tool_choice");
        if (choice == null) {
            return new ToolsRequest(out, out.isEmpty() ? ToolsRequest.Choice.NONE : ToolsRequest.Choice.AUTO, null, true);
        }
        if (!choice.isObject()) {
            throw p.wrongType("tool_choice", "an object", choice);
        }
        JsonParams c = new JsonParams(choice, "tool_choice.");
        for (String key : choice.propertyNames()) {
            if (!Set.of("type", "name", "disable_parallel_tool_use").contains(key)) {
                throw ApiError.invalid("tool_choice." + key, "tool_choice." + key + ": Extra inputs are not permitted");
            }
        }
        String type = c.string("type");
        boolean parallel = !Boolean.TRUE.equals(c.bool("disable_parallel_tool_use"));
        ToolsRequest.Choice mode = switch (type == null ? "" : type) {
            case "auto" -> ToolsRequest.Choice.AUTO;
            case "any" -> ToolsRequest.Choice.REQUIRED;
            case "tool" -> ToolsRequest.Choice.FUNCTION;
            case "none" -> ToolsRequest.Choice.NONE;
            default -> throw ApiError.invalid("tool_choice.type", "tool_choice.type: Input should be 'auto', 'any', "
                    + "'tool' or 'none'");
        };
        String name = c.string("name");
        if (mode == ToolsRequest.Choice.FUNCTION) {
            if (name == null) {
                throw ApiError.invalid("tool_choice.name", "tool_choice.name: Field required");
            }
            if (out.stream().noneMatch(t -> t.name().equals(name))) {
                throw ApiError.invalid("tool_choice.name", "tool_choice.name: the tool '" + name + "' is not among the tools.");
            }
        } else if (name != null) {
            throw ApiError.invalid("tool_choice.name", "tool_choice.name: only tool_choice of type 'tool' names a tool.");
        }
        if (out.isEmpty() && mode != ToolsRequest.Choice.NONE) {
            throw ApiError.invalid("tool_choice", "tool_choice: 'tools' must be given unless tool_choice is 'none'.");
        }
        return new ToolsRequest(out, mode, mode == ToolsRequest.Choice.FUNCTION ? name : null, parallel);
    }

    /** A client tool {@code {name, description, input_schema}} as the chat template sees an OpenAI function tool. */
    private static ToolsRequest.Tool tool(JsonNode t, String path) {
        if (!t.isObject()) {
            throw ApiError.invalid(path, path + ": expected an object, but got " + JsonParams.describe(t) + " instead.");
        }
        JsonParams p = new JsonParams(t, path + ".");
        String type = p.string("type");
        if (type != null && !type.equals("custom")) {
            throw ApiError.unsupported(p.path("type"), p.path("type") + ": the server tool '" + type + "' is not "
                    + "supported; only client tools (name, description, input_schema) are.");
        }
        for (String key : t.propertyNames()) {
            if (!Set.of("type", "name", "description", "input_schema", "cache_control").contains(key)) {
                throw ApiError.invalid(p.path(key), p.path(key) + ": Extra inputs are not permitted");
            }
        }
        ContentBlocks.cacheControl(p);
        String name = p.string("name");
        if (name == null || !TOOL_NAME.matcher(name).matches()) {
            throw ApiError.invalid(p.path("name"), p.path("name") + ": a tool name is 1 to 128 letters, digits, "
                    + "underscores and dashes.");
        }
        String description = p.string("description");
        JsonNode schema = p.node("input_schema");
        if (schema == null) {
            throw ApiError.invalid(p.path("input_schema"), p.path("input_schema") + ": Field required");
        }
        if (!schema.isObject()) {
            throw p.wrongType("input_schema", "a JSON Schema object", schema);
        }
        Object parameters = JsonValues.toJava(schema);
        Map<String, Object> function = new LinkedHashMap<>();
        function.put("name", name);
        if (description != null) {
            function.put("description", description);
        }
        function.put("parameters", parameters);
        Map<String, Object> template = new LinkedHashMap<>();
        template.put("type", "function");
        template.put("function", function);
        return new ToolsRequest.Tool(name, parameters, template);
    }
}
