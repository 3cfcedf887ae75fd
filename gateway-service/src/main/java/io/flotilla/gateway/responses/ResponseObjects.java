package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.ChoiceResult;
import io.flotilla.gateway.toolcall.ToolCalls;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

/**
 * The {@code response} objects of one request and their output items, for the whole answer and for the stream
 * alike, so both say the same: a {@code reasoning} item (the reasoning parser's text as a {@code reasoning_text}
 * part), a {@code message} item (one {@code output_text} part), then one {@code function_call} item per parsed
 * call, in the order the model wrote them. Item ids derive from the request id. A response cut by
 * {@code max_output_tokens} is {@code incomplete}, and so is its last item.
 */
public final class ResponseObjects {

    private final JsonMapper json;
    private final String requestId;
    private final long createdAt;
    private final String model;
    private final ObjectNode echo;

    /**
     * @param echo the request fields the response repeats ({@link ResponsesRequest#echo()})
     */
    public ResponseObjects(JsonMapper json, String requestId, long createdAt, String model, ObjectNode echo) {
        this.json = json;
        this.requestId = requestId;
        this.createdAt = createdAt;
        this.model = model;
        this.echo = echo;
    }

    public String id() {
        return "resp_" + requestId;
    }

    String reasoningId() {
        return "rs_" + requestId;
    }

    String messageId() {
        return "msg_" + requestId;
    }

    String callId(int index) {
        return "fc_" + requestId + "_" + index;
    }

    /** The output items of a whole answer. */
    public List<ObjectNode> output(ChoiceResult choice) {
        List<ObjectNode> out = new ArrayList<>();
        if (choice.reasoning() != null && !choice.reasoning().isEmpty()) {
            out.add(reasoning(choice.reasoning(), "completed"));
        }
        if (choice.content() != null && !choice.content().isEmpty()) {
            out.add(message(choice.content(), "completed"));
        }
        List<ToolCalls.Call> calls = choice.toolCalls();
        for (int i = 0; i < calls.size(); i++) {
            out.add(functionCall(i, calls.get(i).id(), calls.get(i).name(), calls.get(i).arguments(), "completed"));
        }
        return out;
    }

    ObjectNode reasoning(String text, String status) {
        ObjectNode o = json.createObjectNode().put("id", reasoningId()).put("type", "reasoning");
        o.putArray("summary");
        if (text != null) {
            o.putArray("content").add(reasoningPart(text));
        } else {
            o.putArray("content");
        }
        return o.put("status", status);
    }

    ObjectNode reasoningPart(String text) {
        return json.createObjectNode().put("type", "reasoning_text").put("text", text);
    }

    ObjectNode message(String text, String status) {
        ObjectNode o = json.createObjectNode().put("id", messageId()).put("type", "message").put("status", status)
                .put("role", "assistant");
        if (text != null) {
            o.putArray("content").add(textPart(text));
        } else {
            o.putArray("content");
        }
        return o;
    }

    ObjectNode textPart(String text) {
        ObjectNode part = json.createObjectNode().put("type", "output_text").put("text", text);
        part.putArray("annotations");
        part.putArray("logprobs");
        return part;
    }

    ObjectNode functionCall(int index, String callId, String name, String arguments, String status) {
        return json.createObjectNode().put("id", callId(index)).put("type", "function_call").put("status", status)
                .put("call_id", callId).put("name", name).put("arguments", arguments);
    }

    /**
     * The response object.
     *
     * @param status       {@code in_progress}, {@code completed}, {@code incomplete} or {@code failed}
     * @param output       its output items; with {@code incomplete}, the last is marked incomplete here
     * @param usage        null until the response ends
     * @param completedAt  epoch seconds the response ended, or null
     * @param error        with {@code failed}: what failed
     */
    public ObjectNode response(String status, List<ObjectNode> output, TokenUsage usage, Long completedAt, ApiError error) {
        ObjectNode r = json.createObjectNode().put("id", id()).put("object", "response").put("created_at", createdAt)
                .put("status", status);
        r.put("completed_at", completedAt);
        if (error == null) {
            r.putNull("error");
        } else {
            r.putObject("error").put("code", error.code() == null ? "server_error" : error.code())
                    .put("message", error.getMessage());
        }
        if (status.equals("incomplete")) {
            r.putObject("incomplete_details").put("reason", "max_output_tokens");
        } else {
            r.putNull("incomplete_details");
        }
        r.put("model", model);
        var items = r.putArray("output");
        for (int i = 0; i < output.size(); i++) {
            ObjectNode item = output.get(i);
            if (status.equals("incomplete") && i == output.size() - 1) {
                item = item.deepCopy().put("status", "incomplete");
            }
            items.add(item);
        }
        r.setAll(echo);
        if (usage == null) {
            r.putNull("usage");
        } else {
            ObjectNode u = r.putObject("usage").put("input_tokens", usage.promptTokens());
            // as on /v1/messages: nothing is billed as written to a cache (the engines cache every prefix on their own)
            u.putObject("input_tokens_details").put("cached_tokens", usage.cachedTokens()).put("cache_write_tokens", 0);
            u.put("output_tokens", usage.completionTokens());
            u.putObject("output_tokens_details").put("reasoning_tokens", usage.reasoningTokens());
            u.put("total_tokens", usage.totalTokens());
        }
        return r;
    }

    /** {@code completed}, or {@code incomplete} when the output limit cut the answer. */
    public static String status(String finishReason) {
        return "length".equals(finishReason) ? "incomplete" : "completed";
    }
}
