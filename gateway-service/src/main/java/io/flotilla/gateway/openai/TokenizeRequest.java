package io.flotilla.gateway.openai;

import io.flotilla.gateway.tokenize.ChatMessage;
import tools.jackson.databind.JsonNode;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A {@code POST /tokenize} body in vLLM's shapes: a completion's {@code prompt} (text) or a chat's {@code messages}
 * (with optional {@code tools}), tokenized as the gateway tokenizes that request for an engine. Strict like the
 * completion parser: unknown fields and options this gateway cannot honour are 400s naming them.
 *
 * @param model            the model whose tokenizer and chat template apply; null for the gateway's default
 * @param prompt           the text of a completion prompt, or null for a chat
 * @param messages         the conversation of a chat, or null for a completion prompt
 * @param tools            the tools the chat template is given; empty for none
 * @param addSpecialTokens add the tokenizer's special tokens (BOS) as a completion prompt gets them; vLLM's default
 *                         is true for a prompt and false for messages (whose template writes them)
 * @param returnTokenStrs  return each token's text beside its id
 */
public record TokenizeRequest(String model, String prompt, List<ChatMessage> messages, List<Map<String, Object>> tools,
                              boolean addSpecialTokens, boolean returnTokenStrs) {

    private static final Set<String> PROMPT_FIELDS = Set.of("model", "prompt", "add_special_tokens", "return_token_strs");
    private static final Set<String> CHAT_FIELDS = Set.of("model", "messages", "tools", "add_generation_prompt",
            "continue_final_message", "add_special_tokens", "return_token_strs");

    public static TokenizeRequest parse(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        boolean chat = body.has("messages");
        if (chat == body.has("prompt")) {
            throw ApiError.invalid(chat ? "prompt" : "messages",
                    "Give either 'prompt' (a completion prompt) or 'messages' (a chat), not " + (chat ? "both." : "neither."));
        }
        for (String key : body.propertyNames()) {
            if (!(chat ? CHAT_FIELDS : PROMPT_FIELDS).contains(key)) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        JsonParams p = new JsonParams(body, "");
        String model = model(p);
        boolean returnStrs = Boolean.TRUE.equals(p.bool("return_token_strs"));
        if (!chat) {
            String prompt = p.string("prompt");
            boolean special = !Boolean.FALSE.equals(p.bool("add_special_tokens"));
            return new TokenizeRequest(model, prompt, null, List.of(), special, returnStrs);
        }
        if (Boolean.FALSE.equals(p.bool("add_generation_prompt"))) {
            throw ApiError.unsupported("add_generation_prompt", "Unsupported value: 'add_generation_prompt' false: the "
                    + "gateway renders chats as it sends them to engines, ending with the assistant's generation prompt.");
        }
        if (Boolean.TRUE.equals(p.bool("continue_final_message"))) {
            throw ApiError.unsupported("continue_final_message", "Unsupported value: 'continue_final_message' true: the "
                    + "gateway's chat requests always start a new assistant message.");
        }
        List<ChatMessage> messages = MessagesParser.parse(p);
        ToolsRequest tools = body.has("tools") ? ToolsParser.tools(p) : ToolsRequest.NONE;
        return new TokenizeRequest(model, null, messages, tools.templateTools(),
                Boolean.TRUE.equals(p.bool("add_special_tokens")), returnStrs);
    }

    /** A {@code POST /detokenize} body: {@code model} (optional) and {@code tokens} (ids). */
    public static Detokenize parseDetokenize(JsonNode body) {
        if (body == null || !body.isObject()) {
            throw ApiError.invalid(null, "The request body must be a JSON object.");
        }
        for (String key : body.propertyNames()) {
            if (!key.equals("model") && !key.equals("tokens")) {
                throw ApiError.invalid(key, "Unrecognized request argument supplied: " + key);
            }
        }
        JsonParams p = new JsonParams(body, "");
        JsonNode tokens = p.node("tokens");
        if (tokens == null) {
            throw ApiError.invalid("tokens", "Missing required parameter: 'tokens'.");
        }
        if (!tokens.isArray()) {
            throw p.wrongType("tokens", "an array of token ids", tokens);
        }
        int[] ids = new int[tokens.size()];
        for (int i = 0; i < ids.length; i++) {
            JsonNode t = tokens.get(i);
            if (!t.isIntegralNumber() || !t.canConvertToInt() || t.intValue() < 0) {
                throw ApiError.invalid("tokens", "Invalid 'tokens[" + i + "]': expected a non-negative token id, but got "
                        + JsonParams.describe(t) + (t.isNumber() ? " " + t : "") + " instead.");
            }
            ids[i] = t.intValue();
        }
        return new Detokenize(model(p), ids);
    }

    /** A {@code POST /detokenize} body; {@code model} null for the gateway's default. */
    public record Detokenize(String model, int[] tokens) {
    }

    private static String model(JsonParams p) {
        String model = p.string("model");
        if (model != null && model.isBlank()) {
            throw ApiError.invalid("model", "Invalid 'model': must not be empty.");
        }
        return model;
    }
}
