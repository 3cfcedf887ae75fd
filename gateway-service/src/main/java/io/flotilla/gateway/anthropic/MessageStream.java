package io.flotilla.gateway.anthropic;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.ToolCallDelta;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

/**
 * A streamed Messages response, event by event in Anthropic's order: {@code message_start}, {@code ping},
 * then per content block {@code content_block_start}, its {@code content_block_delta}s
 * ({@code thinking_delta}, {@code text_delta} or {@code input_json_delta}) and {@code content_block_stop},
 * then {@code message_delta} (stop reason, stop sequence, usage) and {@code message_stop}. A block is
 * opened when output of another kind arrives (reasoning, answer text, a new tool call) and closed before
 * the next one opens; at most one is open at a time and indexes count up from 0. Within one pipeline
 * delta, reasoning comes before text and text before calls, the order the parsers release them in.
 * Not thread-safe; one per response, fed in order.
 */
public final class MessageStream {

    /** One server-sent event: {@code event: name} and its JSON {@code data}. */
    public record Event(String name, String data) {

        public String sse() {
            return "event: " + name + "\ndata: " + data + "\n\n";
        }
    }

    private enum Block { THINKING, TEXT, TOOL_USE }

    private final JsonMapper json;
    private final MessageRenderer renderer;
    private boolean started;
    private boolean stopped;
    private int index = -1;
    private Block open;
    private int openCall = -1;
    private boolean anyCall;

    public MessageStream(JsonMapper json, MessageRenderer renderer) {
        this.json = json;
        this.renderer = renderer;
    }

    public boolean started() {
        return started;
    }

    /** {@code message_start} with the usage known when output begins, then a {@code ping}. */
    public List<Event> start(TokenUsage usage) {
        if (started) {
            throw new IllegalStateException("the message has started already");
        }
        started = true;
        ObjectNode start = json.createObjectNode().put("type", "message_start");
        start.set("message", renderer.started(usage));
        return List.of(event("message_start", start), event("ping", json.createObjectNode().put("type", "ping")));
    }

    public List<Event> delta(OutputEvent.Delta d) {
        List<Event> out = new ArrayList<>(4);
        if (!d.reasoning().isEmpty()) {
            if (open != Block.THINKING) {
                open(out, Block.THINKING, json.createObjectNode().put("type", "thinking").put("thinking", "")
                        .put("signature", ""));
            }
            out.add(blockDelta(json.createObjectNode().put("type", "thinking_delta").put("thinking", d.reasoning())));
        }
        if (!d.content().isEmpty()) {
            if (open != Block.TEXT) {
                open(out, Block.TEXT, json.createObjectNode().put("type", "text").put("text", ""));
            }
            out.add(blockDelta(json.createObjectNode().put("type", "text_delta").put("text", d.content())));
        }
        for (ToolCallDelta c : d.toolCalls()) {
            if (c.first()) {
                ObjectNode block = json.createObjectNode().put("type", "tool_use").put("id", c.id()).put("name", c.name());
                block.putObject("input");
                open(out, Block.TOOL_USE, block);
                openCall = c.index();
                anyCall = true;
            } else if (open != Block.TOOL_USE || openCall != c.index()) {
                throw new IllegalStateException("arguments of tool call " + c.index() + " after call " + openCall + " started");
            }
            if (!c.arguments().isEmpty()) {
                out.add(blockDelta(json.createObjectNode().put("type", "input_json_delta").put("partial_json", c.arguments())));
            }
        }
        return out;
    }

    /** Closes the open block, then {@code message_delta} and {@code message_stop}. */
    public List<Event> done(String finishReason, String stopSequence, TokenUsage usage) {
        List<Event> out = new ArrayList<>(3);
        close(out);
        stopped = true;
        ObjectNode delta = json.createObjectNode().put("type", "message_delta");
        delta.putObject("delta").put("stop_reason", MessageRenderer.stopReason(finishReason, anyCall, stopSequence))
                .put("stop_sequence", stopSequence);
        delta.set("usage", renderer.usage(usage));
        out.add(event("message_delta", delta));
        out.add(event("message_stop", json.createObjectNode().put("type", "message_stop")));
        return out;
    }

    /** An {@code error} event: how a stream that has started reports a failure; the stream ends after it. */
    public Event error(ApiError e) {
        stopped = true;
        return new Event("error", AnthropicErrors.body(json, e));
    }

    public boolean stopped() {
        return stopped;
    }

    private void open(List<Event> out, Block kind, ObjectNode block) {
        close(out);
        index++;
        open = kind;
        ObjectNode start = json.createObjectNode().put("type", "content_block_start").put("index", index);
        start.set("content_block", block);
        out.add(event("content_block_start", start));
    }

    private void close(List<Event> out) {
        if (open != null) {
            out.add(event("content_block_stop", json.createObjectNode().put("type", "content_block_stop").put("index", index)));
            open = null;
            openCall = -1;
        }
    }

    private Event blockDelta(ObjectNode delta) {
        ObjectNode e = json.createObjectNode().put("type", "content_block_delta").put("index", index);
        e.set("delta", delta);
        return event("content_block_delta", e);
    }

    private Event event(String name, ObjectNode data) {
        return new Event(name, json.writeValueAsString(data));
    }
}
