package io.flotilla.gateway.openai;

import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

/**
 * Validates the JSON body of {@code /v1/chat/completions} and {@code /v1/completions} into a
 * {@link CompletionRequest}. Strict: unknown parameters, wrong types, out-of-range values and
 * parameters of unsupported features are 400s naming the parameter; {@link RequestFields} lists what
 * is accepted and where it goes. Model existence, tokenization, the context limit and whether the
 * model's engines can honour each sampling parameter are checked later, per model. Stateless.
 */
public final class RequestParser {

    /** Most stop strings per request. */
    public static final int MAX_STOP_STRINGS = 16;
    /** Most choices per request. */
    public static final int MAX_N = 128;
    /** Most top_logprobs alternatives a request may ask for (OpenAI's limit). */
    public static final int MAX_TOP_LOGPROBS = 20;

    public CompletionRequest parse(CompletionKind kind, JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        for (String key : body.propertyNames()) {
            if (!RequestFields.accepted(kind, key)) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        UnsupportedParams.check(body, kind == CompletionKind.CHAT ? UnsupportedParams.CHAT : UnsupportedParams.TEXT);
        JsonParams p = new JsonParams(body, "");

        String model = p.string("model");
        if (model != null && model.isBlank()) {
            throw ApiError.invalid("model", "Invalid 'model': must not be empty.");
        }
        Long n = p.integer("n", 1, MAX_N);
        Long maxTokens = p.integer("max_tokens", 1, Integer.MAX_VALUE);
        if (kind == CompletionKind.CHAT) {
            Long maxCompletion = p.integer("max_completion_tokens", 1, Integer.MAX_VALUE);
            if (maxCompletion != null) {
                maxTokens = maxCompletion; // the newer name wins when both are given
            }
        }
        List<String> stop = stop(p);
        SamplingRequest sampling = SamplingParser.parse(p);
        boolean stream = Boolean.TRUE.equals(p.bool("stream"));
        boolean includeUsage = streamOptions(p, stream);
        String user = p.string("user");

        List<ChatMessage> messages = null;
        String promptText = null;
        int[] promptTokens = null;
        ToolsRequest tools = ToolsRequest.NONE;
        OutputFormat format = OutputFormat.TEXT;
        LogprobsRequest logprobs;
        if (kind == CompletionKind.CHAT) {
            messages = MessagesParser.parse(p);
            tools = ToolsParser.tools(p);
            format = ToolsParser.responseFormat(p);
            if (tools.forced() && format.kind() != OutputFormat.Kind.TEXT) {
                throw ApiError.invalid("response_format", "Invalid 'response_format': it cannot be combined with "
                        + "tool_choice '" + (tools.choice() == ToolsRequest.Choice.REQUIRED ? "required" : "function")
                        + "', which constrains the answer itself.");
            }
            logprobs = chatLogprobs(p);
        } else {
            JsonNode prompt = p.node("prompt");
            if (prompt != null && prompt.isString()) {
                promptText = promptText(prompt);
            } else {
                promptTokens = promptTokens(p, prompt);
            }
            Long top = p.integer("logprobs", 0, MAX_TOP_LOGPROBS);
            logprobs = top == null ? LogprobsRequest.OFF : new LogprobsRequest(true, top.intValue());
        }
        return new CompletionRequest(kind, model, messages, promptText, promptTokens,
                maxTokens == null ? null : maxTokens.intValue(), stop, sampling, n == null ? 1 : n.intValue(), user,
                stream, includeUsage, tools, format, logprobs);
    }

    /** {@code logprobs: true} with {@code top_logprobs} (which needs it). */
    private static LogprobsRequest chatLogprobs(JsonParams p) {
        boolean on = Boolean.TRUE.equals(p.bool("logprobs"));
        Long top = p.integer("top_logprobs", 0, MAX_TOP_LOGPROBS);
        if (top != null && !on) {
            throw ApiError.invalid("top_logprobs", "Invalid 'top_logprobs': 'logprobs' must be set to true when "
                    + "'top_logprobs' is used.");
        }
        return on ? new LogprobsRequest(true, top == null ? 0 : top.intValue()) : LogprobsRequest.OFF;
    }

    private static List<String> stop(JsonParams p) {
        JsonNode stop = p.node("stop");
        List<String> out = new ArrayList<>();
        if (stop == null) {
            return out;
        }
        if (stop.isString()) {
            out.add(stop.stringValue());
        } else if (stop.isArray()) {
            for (int i = 0; i < stop.size(); i++) {
                JsonNode s = stop.get(i);
                if (!s.isString()) {
                    throw ApiError.invalid("stop", "Invalid type for 'stop[" + i + "]': expected a string, but got "
                            + JsonParams.describe(s) + " instead.");
                }
                out.add(s.stringValue());
            }
            if (out.size() > MAX_STOP_STRINGS) {
                throw ApiError.invalid("stop", "Invalid 'stop': at most " + MAX_STOP_STRINGS + " stop strings are allowed.");
            }
        } else {
            throw p.wrongType("stop", "a string or an array of strings", stop);
        }
        if (out.stream().anyMatch(String::isEmpty)) {
            throw ApiError.invalid("stop", "Invalid 'stop': stop strings must not be empty.");
        }
        return out;
    }

    /** {@code stream_options}: only {@code include_usage}, and only with {@code stream: true}. */
    private static boolean streamOptions(JsonParams p, boolean stream) {
        JsonNode options = p.node("stream_options");
        if (options == null) {
            return false;
        }
        if (!stream) {
            throw ApiError.invalid("stream_options", "The 'stream_options' parameter is only allowed when 'stream' is enabled.");
        }
        if (!options.isObject()) {
            throw p.wrongType("stream_options", "an object", options);
        }
        for (String key : options.propertyNames()) {
            if (!key.equals("include_usage") && !options.get(key).isNull()) {
                throw ApiError.unsupported("stream_options." + key, "Unsupported parameter 'stream_options." + key + "'.");
            }
        }
        return Boolean.TRUE.equals(new JsonParams(options, "stream_options.").bool("include_usage"));
    }

    private static String promptText(JsonNode prompt) {
        if (prompt.stringValue().isEmpty()) {
            throw ApiError.invalid("prompt", "Invalid 'prompt': must not be empty.");
        }
        return prompt.stringValue();
    }

    /** A prompt given as one array of token ids; batches (arrays of strings or of arrays) are refused. */
    private static int[] promptTokens(JsonParams p, JsonNode prompt) {
        if (prompt == null) {
            throw ApiError.invalid("prompt", "Missing required parameter: 'prompt'.");
        }
        if (!prompt.isArray()) {
            throw p.wrongType("prompt", "a string or an array of token ids", prompt);
        }
        if (prompt.isEmpty()) {
            throw ApiError.invalid("prompt", "Invalid 'prompt': must not be empty.");
        }
        int[] ids = new int[prompt.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = prompt.get(i);
            if (t.isString() || t.isArray()) {
                throw ApiError.unsupported("prompt", "Unsupported 'prompt': batched prompts (an array of "
                        + (t.isString() ? "strings" : "token arrays") + ") are not supported; send one prompt per request.");
            }
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0) {
                throw ApiError.invalid("prompt", "Invalid 'prompt[" + i + "]': expected a non-negative integer token id, but got "
                        + t + " instead.");
            }
            ids[i] = t.intValue();
        }
        return ids;
    }
}
