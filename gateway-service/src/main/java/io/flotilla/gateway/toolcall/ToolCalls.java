package io.flotilla.gateway.toolcall;

import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import java.util.ArrayList;
import java.util.List;

/**
 * A whole output's content and tool calls, collected from a {@link ToolCallStream}. The non-streamed
 * answer is strict, as vLLM's is: when any call is incomplete or its arguments are not JSON, the
 * output is returned as plain content without calls ({@link #strict}).
 *
 * @param content   the text that is not calls
 * @param calls     the calls, in output order
 * @param malformed something that looked like a call was not one (its text is content; with an invalid
 *                  call the whole output is)
 */
public record ToolCalls(String content, List<Call> calls, boolean malformed) {

    private static final JsonMapper JSON = JsonMapper.builder().build();

    /** @param arguments JSON text */
    public record Call(String id, String name, String arguments) {
    }

    /** Parses all of {@code text} at once. */
    public static ToolCalls strict(ToolCallStream stream, String text) {
        Collector c = new Collector();
        stream.push(text, c);
        stream.finish(c);
        List<Call> calls = new ArrayList<>();
        for (int i = 0; i < c.names.size(); i++) {
            String args = c.arguments.get(i).toString();
            if (!c.ended.get(i) || !json(args)) {
                return new ToolCalls(text, List.of(), true);
            }
            calls.add(new Call(c.ids.get(i), c.names.get(i), args));
        }
        String content = c.content.toString();
        return new ToolCalls(calls.isEmpty() ? text : content, calls, c.rejected > 0);
    }

    private static boolean json(String text) {
        try {
            JSON.readTree(text);
            return !text.isBlank();
        } catch (JacksonException e) {
            return false;
        }
    }

    /** A sink that remembers everything (also used by tests). */
    public static final class Collector implements ToolCallSink {
        public final StringBuilder content = new StringBuilder();
        public final List<String> ids = new ArrayList<>();
        public final List<String> names = new ArrayList<>();
        public final List<StringBuilder> arguments = new ArrayList<>();
        public final List<Boolean> ended = new ArrayList<>();
        public int rejected;

        @Override
        public void rejected() {
            rejected++;
        }

        @Override
        public void content(String text) {
            content.append(text);
        }

        @Override
        public void callStarted(int index, String id, String name) {
            ids.add(id);
            names.add(name);
            arguments.add(new StringBuilder());
            ended.add(false);
        }

        @Override
        public void callArguments(int index, String fragment) {
            arguments.get(index).append(fragment);
        }

        @Override
        public void callEnded(int index) {
            ended.set(index, true);
        }
    }
}
