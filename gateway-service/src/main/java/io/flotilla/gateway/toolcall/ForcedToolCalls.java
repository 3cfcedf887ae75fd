package io.flotilla.gateway.toolcall;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Tool calls the request forces ({@code tool_choice} {@code required} or a named function), as vLLM
 * serves them: the engine's structured output constrains the answer to JSON — the named function's
 * arguments, or an array of {@code {"name", "parameters"}} objects — and the output is read as that
 * JSON, whatever the model's own call format. {@link #schema} gives the constraint.
 */
public final class ForcedToolCalls {

    private ForcedToolCalls() {
    }

    /** The whole output is the arguments of {@code function}. */
    public static ToolCallStream named(String function, Supplier<String> ids) {
        return new ToolCallStream() {
            private final CallEmitter calls = new CallEmitter(ids);

            @Override
            public void push(String text, ToolCallSink out) {
                if (calls.calls() == 0) {
                    calls.start(function, out);
                }
                calls.arguments(text, out);
            }

            @Override
            public void finish(ToolCallSink out) {
                if (calls.calls() == 0) {
                    calls.start(function, out);
                }
                calls.end(out);
            }
        };
    }

    /** The output is a JSON array of calls ({@code tool_choice: required}). */
    public static ToolCallStream required(Supplier<String> ids) {
        return new ToolCallStream() {
            private final CallEmitter calls = new CallEmitter(ids);
            private final JsonCallList list = new JsonCallList(true, ',', calls);
            private final StringBuilder seen = new StringBuilder();

            @Override
            public void push(String text, ToolCallSink out) {
                if (list.ended()) {
                    out.content(text);
                    return;
                }
                int used = list.feed(text, 0, out);
                seen.append(text, 0, used);
                if (list.state() == JsonCallList.State.FAILED) {
                    out.rejected();
                    out.content((calls.calls() == 0 ? seen.toString() : list.failedText()) + text.substring(used));
                } else if (used < text.length()) {
                    out.content(text.substring(used));
                }
            }

            @Override
            public void finish(ToolCallSink out) {
                if (list.endedUnnamed()) {
                    out.rejected();
                    out.content(calls.calls() == 0 ? seen.toString() : list.failedText());
                } else {
                    list.finish(out);
                }
            }
        };
    }

    /**
     * The JSON schema that forces the answer: the function's parameters (named), or a non-empty array
     * (at most one element unless {@code parallel}) of {@code {"name": one of the tools, "parameters": its
     * parameters}} (required).
     *
     * @param tools   each tool's name and parameters schema (a JSON value as maps), in request order
     * @param named   the function {@code tool_choice} names, or null for {@code required}
     */
    public static Map<String, Object> schema(Map<String, Object> tools, String named, boolean parallel) {
        if (named != null) {
            Object parameters = tools.get(named);
            return parameters instanceof Map<?, ?> ? castMap(parameters) : Map.of("type", "object");
        }
        List<Object> branches = tools.entrySet().stream().map(e -> {
            Map<String, Object> properties = new LinkedHashMap<>();
            properties.put("name", Map.of("type", "string", "enum", List.of(e.getKey())));
            properties.put("parameters", e.getValue() == null ? Map.of("type", "object") : e.getValue());
            Map<String, Object> call = new LinkedHashMap<>();
            call.put("type", "object");
            call.put("properties", properties);
            call.put("required", List.of("name", "parameters"));
            return (Object) call;
        }).toList();
        Map<String, Object> array = new LinkedHashMap<>();
        array.put("type", "array");
        array.put("minItems", 1);
        if (!parallel) {
            array.put("maxItems", 1);
        }
        array.put("items", Map.of("anyOf", branches));
        return array;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> castMap(Object o) {
        return (Map<String, Object>) o;
    }
}
