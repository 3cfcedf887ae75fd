package io.flotilla.gateway.toolcall;

import java.util.List;
import java.util.function.Supplier;

/**
 * Mistral tool calls, both forms its tokenizers have shipped: {@code [TOOL_CALLS] [{"name": "f",
 * "arguments": {…}}, …]} (v3: Mistral 7B v0.3, Nemo, Small 3.1) and {@code [TOOL_CALLS]f[ARGS]{…}} per call
 * (v11+: Small 3.2, Magistral, Devstral). Text before the marker is content. {@code [TOOL_CALLS]} and
 * {@code [ARGS]} are special tokens, which the gateway then decodes as their text; ids are nine letters
 * and digits, which Mistral's templates require when the calls come back in the history.
 */
public final class MistralToolParser implements ToolCallParser {

    public static final String NAME = "mistral";
    static final String TOOL_CALLS = "[TOOL_CALLS]";
    static final String ARGS = "[ARGS]";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> specialMarkers() {
        return List.of(TOOL_CALLS, ARGS);
    }

    @Override
    public Supplier<String> ids() {
        return ToolCallIds.mistral();
    }

    @Override
    public ToolCallStream stream(Supplier<String> ids) {
        return new Stream(ids);
    }

    private static final class Stream implements ToolCallStream {

        private enum Mode { TEXT, AFTER_MARKER, ARRAY, NAME, ARGUMENTS }

        private final CallEmitter calls;
        private final StringBuilder pending = new StringBuilder();
        private final StringBuilder raw = new StringBuilder();
        private Mode mode = Mode.TEXT;
        private JsonCallList array;
        private final ValueReader value = new ValueReader();

        Stream(Supplier<String> ids) {
            this.calls = new CallEmitter(ids);
        }

        @Override
        public void push(String text, ToolCallSink out) {
            pending.append(text);
            boolean progress = true;
            while (progress && !pending.isEmpty()) {
                progress = switch (mode) {
                    case TEXT -> text(out);
                    case AFTER_MARKER -> afterMarker();
                    case ARRAY -> array(out);
                    case NAME -> name(out);
                    case ARGUMENTS -> arguments(out);
                };
            }
        }

        private boolean text(ToolCallSink out) {
            int at = pending.indexOf(TOOL_CALLS);
            if (at >= 0) {
                String before = pending.substring(0, at);
                if (!(calls.calls() > 0 && Markers.blank(before)) && !before.isEmpty()) {
                    out.content(before);
                }
                pending.delete(0, at + TOOL_CALLS.length());
                raw.setLength(0);
                mode = Mode.AFTER_MARKER;
                return true;
            }
            int keep = Markers.partial(pending, TOOL_CALLS);
            if (pending.length() > keep) {
                out.content(pending.substring(0, pending.length() - keep));
                pending.delete(0, pending.length() - keep);
            }
            return false;
        }

        /** v3 writes a JSON array after the marker, v11 the function's name. */
        private boolean afterMarker() {
            int i = 0;
            while (i < pending.length() && JsonCallScanner.ws(pending.charAt(i))) {
                i++;
            }
            if (i == pending.length()) {
                return false;
            }
            raw.append(pending, 0, i);
            pending.delete(0, i);
            if (pending.charAt(0) == '[') {
                array = new JsonCallList(true, ',', calls);
                mode = Mode.ARRAY;
            } else {
                mode = Mode.NAME;
            }
            return true;
        }

        private boolean array(ToolCallSink out) {
            int used = array.feed(pending, 0, out);
            raw.append(pending, 0, used);
            pending.delete(0, used);
            if (array.state() == JsonCallList.State.FAILED) {
                out.rejected();
                out.content(calls.calls() == 0 ? TOOL_CALLS + raw : array.failedText());
                mode = Mode.TEXT;
                return true;
            }
            if (array.state() == JsonCallList.State.CLOSED) {
                mode = Mode.TEXT;
                return true;
            }
            return false;
        }

        private boolean name(ToolCallSink out) {
            int at = pending.indexOf(ARGS);
            if (at < 0) {
                return false;
            }
            String name = pending.substring(0, at).strip();
            raw.append(pending, 0, at + ARGS.length());
            pending.delete(0, at + ARGS.length());
            if (name.isEmpty() || name.contains(" ")) {
                out.rejected();
                out.content(TOOL_CALLS + raw);
                mode = Mode.TEXT;
                return true;
            }
            calls.start(name, out);
            value.reset();
            mode = Mode.ARGUMENTS;
            return true;
        }

        private boolean arguments(ToolCallSink out) {
            int used = value.feed(pending);
            calls.arguments(pending.substring(0, used), out);
            pending.delete(0, used);
            if (value.done()) {
                calls.end(out);
                mode = Mode.TEXT;
                return true;
            }
            return false;
        }

        @Override
        public void finish(ToolCallSink out) {
            switch (mode) {
                case TEXT -> {
                    if (!pending.isEmpty()) {
                        out.content(pending.toString());
                    }
                }
                case AFTER_MARKER -> {
                    out.rejected();
                    out.content(TOOL_CALLS + raw + pending);
                }
                case ARRAY -> {
                    if (array.endedUnnamed()) {
                        out.rejected();
                        out.content(calls.calls() == 0 ? TOOL_CALLS + raw : array.failedText());
                    } else {
                        array.finish(out);
                    }
                }
                case NAME -> {
                    out.rejected();
                    out.content(TOOL_CALLS + raw + pending);
                }
                case ARGUMENTS -> calls.end(out);
            }
            pending.setLength(0);
        }
    }

    /** One JSON value read as raw text: ends after its closing bracket (or quote). */
    static final class ValueReader {
        private int depth;
        private boolean inString;
        private boolean escaped;
        private boolean started;
        private boolean done;

        void reset() {
            depth = 0;
            inString = false;
            escaped = false;
            started = false;
            done = false;
        }

        boolean done() {
            return done;
        }

        /** Characters of {@code text} that belong to the value. */
        int feed(CharSequence text) {
            int i = 0;
            while (i < text.length() && !done) {
                char c = text.charAt(i++);
                if (!started) {
                    if (JsonCallScanner.ws(c)) {
                        continue;
                    }
                    started = true;
                }
                if (inString) {
                    if (escaped) {
                        escaped = false;
                    } else if (c == '\\') {
                        escaped = true;
                    } else if (c == '"') {
                        inString = false;
                        done = depth == 0;
                    }
                } else if (c == '"') {
                    inString = true;
                } else if (c == '{' || c == '[') {
                    depth++;
                } else if (c == '}' || c == ']') {
                    depth--;
                    done = depth <= 0;
                }
            }
            return i;
        }
    }
}
