package io.flotilla.gateway.responses;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.gateway.openai.TokenUsage;
import io.flotilla.gateway.output.OutputEvent;
import io.flotilla.gateway.output.ToolCallDelta;
import tools.jackson.databind.json.JsonMapper;
import tools.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.List;

/**
 * A streamed response, event by event in OpenAI's order, each with its {@code sequence_number} (from 0):
 * {@code response.created}, {@code response.in_progress}; per output item {@code response.output_item.added},
 * then for a reasoning item {@code response.content_part.added}, {@code response.reasoning_text.delta}s,
 * {@code response.reasoning_text.done}, {@code response.content_part.done}; for a message the same with
 * {@code response.output_text.delta}/{@code .done}; for a function call
 * {@code response.function_call_arguments.delta}s and {@code .done}; then {@code response.output_item.done};
 * last {@code response.completed} or {@code response.incomplete} with the whole response, or
 * {@code response.failed} when the stream failed after it started. One item is open at a time: output of another
 * kind (or a new call) closes it. Within one pipeline delta reasoning comes before text and text before calls,
 * the order the parsers release them in. The final response is built of the items as streamed, so it says
 * exactly what the deltas said. Not thread-safe; one per response, fed in order.
 */
public final class ResponseEvents {

    /** One server-sent event: {@code event: type} and its JSON {@code data}. */
    public record Event(String type, ObjectNode data) {

        public String sse(JsonMapper json) {
            return "event: " + type + "\ndata: " + json.writeValueAsString(data) + "\n\n";
        }
    }

    private enum Kind { REASONING, MESSAGE, CALL }

    private final ResponseObjects objects;
    private final JsonMapper json;
    private final List<ObjectNode> output = new ArrayList<>();
    private int sequence;
    private boolean started;
    private ObjectNode finalResponse;
    private Kind open;
    private final StringBuilder text = new StringBuilder();
    private int openCall = -1;
    private String callId;
    private String callName;

    public ResponseEvents(JsonMapper json, ResponseObjects objects) {
        this.json = json;
        this.objects = objects;
    }

    public boolean started() {
        return started;
    }

    /** {@code response.created} and {@code response.in_progress}. */
    public List<Event> start() {
        if (started) {
            throw new IllegalStateException("the response has started already");
        }
        started = true;
        ObjectNode inProgress = objects.response("in_progress", List.of(), null, null, null);
        return List.of(withResponse("response.created", inProgress), withResponse("response.in_progress", inProgress));
    }

    public List<Event> delta(OutputEvent.Delta d) {
        List<Event> out = new ArrayList<>(4);
        if (!d.reasoning().isEmpty()) {
            if (open != Kind.REASONING) {
                open(out, Kind.REASONING, objects.reasoning(null, "in_progress"));
                out.add(part("response.content_part.added", objects.reasoningPart("")));
            }
            text.append(d.reasoning());
            out.add(event("response.reasoning_text.delta", itemRef().put("content_index", 0).put("delta", d.reasoning())));
        }
        if (!d.content().isEmpty()) {
            if (open != Kind.MESSAGE) {
                open(out, Kind.MESSAGE, objects.message(null, "in_progress"));
                out.add(part("response.content_part.added", objects.textPart("")));
            }
            text.append(d.content());
            ObjectNode e = itemRef().put("content_index", 0).put("delta", d.content());
            e.putArray("logprobs");
            out.add(event("response.output_text.delta", e));
        }
        for (ToolCallDelta c : d.toolCalls()) {
            if (c.first()) {
                close(out, "completed"); // the previous call ends before this one's fields replace its own
                openCall = c.index();
                callId = c.id();
                callName = c.name();
                open(out, Kind.CALL, objects.functionCall(c.index(), c.id(), c.name(), "", "in_progress"));
            } else if (open != Kind.CALL || openCall != c.index()) {
                throw new IllegalStateException("arguments of tool call " + c.index() + " after call " + openCall + " started");
            }
            if (!c.arguments().isEmpty()) {
                text.append(c.arguments());
                out.add(event("response.function_call_arguments.delta", itemRef().put("delta", c.arguments())));
            }
        }
        return out;
    }

    /** Closes the open item, then {@code response.completed} (or {@code .incomplete}) with the whole response. */
    public List<Event> done(String finishReason, TokenUsage usage, long completedAt) {
        List<Event> out = new ArrayList<>(4);
        String status = ResponseObjects.status(finishReason);
        close(out, status.equals("incomplete") ? "incomplete" : "completed");
        finalResponse = objects.response(status, output, usage, completedAt, null);
        out.add(withResponse("response." + status, finalResponse));
        return out;
    }

    /** {@code response.failed}: how a stream that has started reports a failure; it ends after it. */
    public Event failed(ApiError error) {
        return withResponse("response.failed", objects.response("failed", output, null, null, error));
    }

    /** The response {@code response.completed} carried; null before {@link #done}. */
    public ObjectNode finalResponse() {
        return finalResponse;
    }

    private void open(List<Event> out, Kind kind, ObjectNode item) {
        close(out, "completed");
        open = kind;
        text.setLength(0);
        ObjectNode e = json.createObjectNode().put("output_index", output.size());
        e.set("item", item);
        out.add(event("response.output_item.added", e));
    }

    private void close(List<Event> out, String status) {
        if (open == null) {
            return;
        }
        String t = text.toString();
        ObjectNode item = switch (open) {
            case REASONING -> {
                out.add(event("response.reasoning_text.done", itemRef().put("content_index", 0).put("text", t)));
                out.add(part("response.content_part.done", objects.reasoningPart(t)));
                yield objects.reasoning(t, status);
            }
            case MESSAGE -> {
                ObjectNode e = itemRef().put("content_index", 0).put("text", t);
                e.putArray("logprobs");
                out.add(event("response.output_text.done", e));
                out.add(part("response.content_part.done", objects.textPart(t)));
                yield objects.message(t, status);
            }
            case CALL -> {
                out.add(event("response.function_call_arguments.done", itemRef().put("name", callName).put("arguments", t)));
                yield objects.functionCall(openCall, callId, callName, t, "completed");
            }
        };
        ObjectNode e = json.createObjectNode().put("output_index", output.size());
        e.set("item", item);
        out.add(event("response.output_item.done", e));
        output.add(item);
        open = null;
    }

    private String openItemId() {
        return switch (open) {
            case REASONING -> objects.reasoningId();
            case MESSAGE -> objects.messageId();
            case CALL -> objects.callId(openCall);
        };
    }

    private ObjectNode itemRef() {
        return json.createObjectNode().put("item_id", openItemId()).put("output_index", output.size());
    }

    private Event part(String type, ObjectNode part) {
        ObjectNode e = itemRef().put("content_index", 0);
        e.set("part", part);
        return event(type, e);
    }

    private Event withResponse(String type, ObjectNode response) {
        ObjectNode e = json.createObjectNode();
        e.set("response", response);
        return event(type, e);
    }

    /** {@code type} and {@code sequence_number} first, as OpenAI writes them. */
    private Event event(String type, ObjectNode fields) {
        ObjectNode data = json.createObjectNode().put("type", type).put("sequence_number", sequence++);
        data.setAll(fields);
        return new Event(type, data);
    }
}
