package io.flotilla.gateway.toolcall;

import java.util.function.Supplier;

/**
 * Llama 3.1 / 3.2 / 3.3 JSON tool calls: an output that starts (after whitespace and an optional
 * {@code <|python_tag|>}) with {@code {"name": "f", "parameters": {…}}} is calls, several separated by
 * {@code ;}; any other output is content. {@code arguments} is accepted for {@code parameters}.
 */
public final class Llama3JsonToolParser implements ToolCallParser {

    public static final String NAME = "llama3-json";
    static final String PYTHON_TAG = "<|python_tag|>";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ToolCallStream stream(Supplier<String> ids) {
        return new Stream(ids);
    }

    private static final class Stream implements ToolCallStream {

        private enum Mode { START, CALLS, TEXT }

        private final CallEmitter calls;
        private final StringBuilder pending = new StringBuilder();
        private final StringBuilder seen = new StringBuilder();
        private final JsonCallList list;
        private Mode mode = Mode.START;

        Stream(Supplier<String> ids) {
            this.calls = new CallEmitter(ids);
            this.list = new JsonCallList(false, ';', calls);
        }

        @Override
        public void push(String text, ToolCallSink out) {
            if (mode == Mode.TEXT) {
                out.content(text);
                return;
            }
            pending.append(text);
            if (mode == Mode.START) {
                decide(out);
            }
            if (mode == Mode.CALLS) {
                calls(out);
            }
        }

        /** Waits for the first character that is neither whitespace nor the python tag. */
        private void decide(ToolCallSink out) {
            int i = 0;
            while (i < pending.length() && JsonCallScanner.ws(pending.charAt(i))) {
                i++;
            }
            String rest = pending.substring(i);
            if (rest.startsWith(PYTHON_TAG)) {
                i += PYTHON_TAG.length();
                while (i < pending.length() && JsonCallScanner.ws(pending.charAt(i))) {
                    i++;
                }
                rest = pending.substring(i);
            } else if (!rest.isEmpty() && PYTHON_TAG.startsWith(rest)) {
                return;
            }
            if (rest.isEmpty()) {
                return;
            }
            if (rest.charAt(0) == '{') {
                seen.append(pending, 0, i);
                pending.delete(0, i);
                mode = Mode.CALLS;
            } else {
                mode = Mode.TEXT;
                out.content(pending.toString());
                pending.setLength(0);
            }
        }

        private void calls(ToolCallSink out) {
            int used = list.feed(pending, 0, out);
            seen.append(pending, 0, used);
            pending.delete(0, used);
            if (list.state() == JsonCallList.State.FAILED) {
                out.rejected();
                mode = Mode.TEXT;
                out.content((calls.calls() == 0 ? seen.toString() : list.failedText()) + pending);
                pending.setLength(0);
            } else if (list.state() == JsonCallList.State.CLOSED) {
                mode = Mode.TEXT;
                if (!pending.isEmpty()) {
                    out.content(pending.toString());
                }
                pending.setLength(0);
            }
        }

        @Override
        public void finish(ToolCallSink out) {
            if (mode == Mode.START && !pending.isEmpty()) {
                out.content(pending.toString());
            } else if (mode == Mode.CALLS) {
                if (list.endedUnnamed()) {
                    out.rejected();
                    out.content(calls.calls() == 0 ? seen.toString() : list.failedText());
                } else {
                    list.finish(out);
                }
            }
            pending.setLength(0);
        }
    }
}
