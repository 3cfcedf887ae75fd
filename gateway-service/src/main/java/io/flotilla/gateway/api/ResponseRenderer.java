package io.flotilla.gateway.api;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.CompletionKind;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.TokenLogprob;
import io.flotilla.gateway.output.ToolCallDelta;
import io.flotilla.gateway.toolcall.ToolCalls;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ArrayNode;
import tools.jackson.databind.node.ObjectNode;

import java.util.List;

/**
 * Renders one request's responses in OpenAI's shapes: {@code chat.completion} /
 * {@code chat.completion.chunk} and {@code text_completion} (whole and streamed), with reasoning
 * ({@code reasoning_content}), tool calls (streamed as {@code tool_calls} deltas with index, id, name
 * and argument fragments), log-probabilities (chat: {@code logprobs.content}; text: {@code tokens},
 * {@code token_logprobs}, {@code top_logprobs}, {@code text_offset}), one entry per choice, usage and
 * the error body. Every chunk of a stream carries the same {@code id}, {@code created} and
 * {@code model}. Keeps each choice's text offset, so one instance serves one response.
 */
final class ResponseRenderer {

    private final JsonMapper json;
    private final CompletionKind kind;
    private final String id;
    private final long created;
    private final String model;
    private final boolean includeUsage;
    private final int[] textOffset;

    /**
     * @param id           response id, e.g. {@code chatcmpl-…}
     * @param created      Unix seconds
     * @param choices      choices of the response
     * @param includeUsage streamed chunks carry {@code "usage": null} and a last chunk carries the usage
     */
    public ResponseRenderer(JsonMapper json, CompletionKind kind, String id, long created, String model, int choices,
                            boolean includeUsage) {
        this.json = json;
        this.kind = kind;
        this.id = id;
        this.created = created;
        this.model = model;
        this.includeUsage = includeUsage;
        this.textOffset = new int[choices];
    }

    /** First chunk of a chat stream's choice: the assistant role with empty content. */
    public String roleChunk(int choice) {
        ObjectNode delta = json.createObjectNode().put("role", "assistant").put("content", "");
        return chunk(choice, delta, null, null, null);
    }

    /** New output of one choice. */
    public String deltaChunk(OutputEvent.Delta d) {
        if (kind == CompletionKind.TEXT) {
            return chunk(d.choice(), null, d.content(), textLogprobs(d.choice(), d.logprobs()), null);
        }
        ObjectNode delta = json.createObjectNode();
        if (!d.reasoning().isEmpty()) {
            delta.put("reasoning_content", d.reasoning());
        }
        if (!d.content().isEmpty() || (d.reasoning().isEmpty() && d.toolCalls().isEmpty())) {
            delta.put("content", d.content());
        }
        if (!d.toolCalls().isEmpty()) {
            ArrayNode calls = delta.putArray("tool_calls");
            for (ToolCallDelta c : d.toolCalls()) {
                ObjectNode call = calls.addObject().put("index", c.index());
                if (c.first()) {
                    call.put("id", c.id()).put("type", "function");
                    call.putObject("function").put("name", c.name()).put("arguments", c.arguments());
                } else {
                    call.putObject("function").put("arguments", c.arguments());
                }
            }
        }
        return chunk(d.choice(), delta, null, chatLogprobs(d.logprobs()), null);
    }

    public String finishChunk(int choice, String finishReason) {
        return kind == CompletionKind.CHAT
                ? chunk(choice, json.createObjectNode(), null, null, finishReason)
                : chunk(choice, null, "", null, finishReason);
    }

    /** The {@code include_usage} chunk: empty choices and the usage. */
    public String usageChunk(TokenUsage usage) {
        ObjectNode root = header(kind.chunkObject());
        root.putArray("choices");
        root.set("usage", usage(usage));
        return json.writeValueAsString(root);
    }

    /** The non-streamed response. */
    public String completion(List<ChoiceResult> choices, TokenUsage usage) {
        ObjectNode root = header(kind.object());
        ArrayNode out = root.putArray("choices");
        for (ChoiceResult c : choices) {
            ObjectNode choice = out.addObject().put("index", c.index());
            if (kind == CompletionKind.CHAT) {
                ObjectNode message = choice.putObject("message").put("role", "assistant").put("content", c.content());
                message.putNull("refusal");
                if (c.reasoning() != null) {
                    message.put("reasoning_content", c.reasoning());
                }
                if (!c.toolCalls().isEmpty()) {
                    ArrayNode calls = message.putArray("tool_calls");
                    for (ToolCalls.Call call : c.toolCalls()) {
                        calls.addObject().put("id", call.id()).put("type", "function").putObject("function")
                                .put("name", call.name()).put("arguments", call.arguments());
                    }
                }
                choice.set("logprobs", chatLogprobs(c.logprobs()));
            } else {
                choice.put("text", c.content());
                choice.set("logprobs", textLogprobs(c.index(), c.logprobs()));
            }
            choice.put("finish_reason", c.finishReason());
        }
        root.set("usage", usage(usage));
        return json.writeValueAsString(root);
    }

    /** {@code {"error": {message, type, param, code}}}. */
    public static String errorBody(JsonMapper json, ApiError e) {
        ObjectNode root = json.createObjectNode();
        root.putObject("error")
                .put("message", e.getMessage())
                .put("type", e.type())
                .put("param", e.param())
                .put("code", e.code());
        return json.writeValueAsString(root);
    }

    private String chunk(int index, ObjectNode delta, String text, ObjectNode logprobs, String finishReason) {
        ObjectNode root = header(kind.chunkObject());
        ObjectNode choice = root.putArray("choices").addObject().put("index", index);
        if (delta != null) {
            choice.set("delta", delta);
        } else {
            choice.put("text", text);
        }
        if (logprobs == null) {
            choice.putNull("logprobs");
        } else {
            choice.set("logprobs", logprobs);
        }
        choice.put("finish_reason", finishReason);
        if (includeUsage) {
            root.putNull("usage");
        }
        return json.writeValueAsString(root);
    }

    /** Chat's {@code {"content": [{token, logprob, bytes, top_logprobs}], "refusal": null}}, or null. */
    private ObjectNode chatLogprobs(List<TokenLogprob> logprobs) {
        if (logprobs == null || logprobs.isEmpty()) {
            return null;
        }
        ObjectNode out = json.createObjectNode();
        ArrayNode content = out.putArray("content");
        for (TokenLogprob lp : logprobs) {
            ObjectNode t = content.addObject().put("token", lp.token()).put("logprob", lp.logprob());
            bytes(t, lp.bytes());
            ArrayNode top = t.putArray("top_logprobs");
            for (TokenLogprob.Alternative a : lp.top()) {
                ObjectNode alt = top.addObject().put("token", a.token()).put("logprob", a.logprob());
                bytes(alt, a.bytes());
            }
        }
        out.putNull("refusal");
        return out;
    }

    /** The legacy shape: parallel arrays, alternatives as {token: logprob}, offsets into the choice's text. */
    private ObjectNode textLogprobs(int choice, List<TokenLogprob> logprobs) {
        if (logprobs == null || logprobs.isEmpty()) {
            return null;
        }
        ObjectNode out = json.createObjectNode();
        ArrayNode tokens = out.putArray("tokens");
        ArrayNode values = out.putArray("token_logprobs");
        ArrayNode tops = out.putArray("top_logprobs");
        ArrayNode offsets = out.putArray("text_offset");
        for (TokenLogprob lp : logprobs) {
            tokens.add(lp.token());
            values.add(lp.logprob());
            ObjectNode top = tops.addObject();
            for (TokenLogprob.Alternative a : lp.top()) {
                if (!top.has(a.token())) {
                    top.put(a.token(), a.logprob());
                }
            }
            offsets.add(textOffset[choice]);
            textOffset[choice] += lp.token().length();
        }
        return out;
    }

    private static void bytes(ObjectNode node, byte[] bytes) {
        if (bytes == null) {
            node.putNull("bytes");
            return;
        }
        ArrayNode b = node.putArray("bytes");
        for (byte x : bytes) {
            b.add(x & 0xff);
        }
    }

    private ObjectNode header(String object) {
        return json.createObjectNode()
                .put("id", id)
                .put("object", object)
                .put("created", created)
                .put("model", model);
    }

    private ObjectNode usage(TokenUsage u) {
        ObjectNode usage = json.createObjectNode()
                .put("prompt_tokens", u.promptTokens())
                .put("completion_tokens", u.completionTokens())
                .put("total_tokens", u.totalTokens());
        usage.putObject("prompt_tokens_details").put("cached_tokens", u.cachedTokens());
        usage.putObject("completion_tokens_details").put("reasoning_tokens", u.reasoningTokens());
        return usage;
    }
}
