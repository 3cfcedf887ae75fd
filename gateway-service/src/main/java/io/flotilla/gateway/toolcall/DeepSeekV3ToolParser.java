package io.flotilla.gateway.toolcall;

import java.util.List;
import java.util.function.Supplier;

/**
 * DeepSeek V3 / R1 (0528) tool calls, and V3.1's shorter form, after optional text:
 * <pre>
 * &lt;｜tool▁calls▁begin｜&gt;&lt;｜tool▁call▁begin｜&gt;function&lt;｜tool▁sep｜&gt;NAME\n```json\n{…}\n```&lt;｜tool▁call▁end｜&gt;…&lt;｜tool▁calls▁end｜&gt;
 * &lt;｜tool▁calls▁begin｜&gt;&lt;｜tool▁call▁begin｜&gt;NAME&lt;｜tool▁sep｜&gt;{…}&lt;｜tool▁call▁end｜&gt;…&lt;｜tool▁calls▁end｜&gt;   (V3.1)
 * </pre>
 * The markers are added tokens of DeepSeek's tokenizer; the gateway decodes them as their text.
 */
public final class DeepSeekV3ToolParser implements ToolCallParser {

    public static final String NAME = "deepseek-v3";
    static final String CALLS_BEGIN = "<｜tool▁calls▁begin｜>";
    static final String CALLS_END = "<｜tool▁calls▁end｜>";
    static final String CALL_BEGIN = "<｜tool▁call▁begin｜>";
    static final String CALL_END = "<｜tool▁call▁end｜>";
    static final String SEP = "<｜tool▁sep｜>";
    static final String FENCE_OPEN = "```json\n";
    static final String FENCE_CLOSE = "```";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<String> specialMarkers() {
        return List.of(CALLS_BEGIN, CALLS_END, CALL_BEGIN, CALL_END, SEP);
    }

    @Override
    public ToolCallStream stream(Supplier<String> ids) {
        return new Stream(ids);
    }

    private static final class Stream implements ToolCallStream {

        private enum Mode { TEXT, CALLS, HEADER, NAME_LINE, FENCE, ARGUMENTS, AFTER_ARGUMENTS }

        private static final int MAX_HEADER = 256;

        private final CallEmitter calls;
        private final StringBuilder pending = new StringBuilder();
        /** Text since the calls marker, released as content when it turns out not to be calls. */
        private final StringBuilder raw = new StringBuilder();
        private Mode mode = Mode.TEXT;
        private boolean fenced;

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
                    case CALLS -> betweenCalls(out);
                    case HEADER -> header(out);
                    case NAME_LINE -> nameLine(out);
                    case FENCE -> fence(out);
                    case ARGUMENTS -> arguments(out);
                    case AFTER_ARGUMENTS -> afterArguments(out);
                };
            }
        }

        private boolean text(ToolCallSink out) {
            int at = pending.indexOf(CALLS_BEGIN);
            if (at >= 0) {
                if (at > 0 && !(calls.calls() > 0 && Markers.blank(pending.subSequence(0, at)))) {
                    out.content(pending.substring(0, at));
                }
                pending.delete(0, at + CALLS_BEGIN.length());
                raw.setLength(0);
                raw.append(CALLS_BEGIN);
                mode = Mode.CALLS;
                return true;
            }
            int keep = Markers.partial(pending, CALLS_BEGIN);
            if (pending.length() > keep) {
                out.content(pending.substring(0, pending.length() - keep));
                pending.delete(0, pending.length() - keep);
            }
            return false;
        }

        /** Between calls: the next call, or the end of the calls. */
        private boolean betweenCalls(ToolCallSink out) {
            skipWhitespace();
            if (startsWith(CALL_BEGIN)) {
                consume(CALL_BEGIN.length());
                mode = Mode.HEADER;
                return true;
            }
            if (startsWith(CALLS_END)) {
                consume(CALLS_END.length());
                mode = Mode.TEXT;
                return true;
            }
            if (pending.isEmpty() || CALL_BEGIN.startsWith(pending.toString()) || CALLS_END.startsWith(pending.toString())) {
                return false;
            }
            malformed(out);
            return true;
        }

        /** {@code function<sep>} (V3) or {@code NAME<sep>} (V3.1). */
        private boolean header(ToolCallSink out) {
            int at = pending.indexOf(SEP);
            if (at < 0) {
                return tooLong(out);
            }
            String head = pending.substring(0, at).strip();
            consume(at + SEP.length());
            if (head.equals("function")) {
                mode = Mode.NAME_LINE;
            } else if (!head.isEmpty() && !head.contains("<")) {
                calls.start(head, out);
                fenced = false;
                mode = Mode.ARGUMENTS;
            } else {
                malformed(out);
            }
            return true;
        }

        private boolean nameLine(ToolCallSink out) {
            int at = pending.indexOf("\n");
            if (at < 0) {
                return tooLong(out);
            }
            String name = pending.substring(0, at).strip();
            consume(at + 1);
            if (name.isEmpty()) {
                malformed(out);
                return true;
            }
            calls.start(name, out);
            mode = Mode.FENCE;
            return true;
        }

        private boolean fence(ToolCallSink out) {
            if (startsWith(FENCE_OPEN)) {
                consume(FENCE_OPEN.length());
                fenced = true;
                mode = Mode.ARGUMENTS;
                return true;
            }
            if (FENCE_OPEN.startsWith(pending.toString())) {
                return false;
            }
            fenced = false; // no fence: the arguments follow directly
            mode = Mode.ARGUMENTS;
            return true;
        }

        /** Arguments up to the fence's close (V3) or the call's end marker (V3.1), streamed as they come. */
        private boolean arguments(ToolCallSink out) {
            String end = fenced ? FENCE_CLOSE : CALL_END;
            int at = pending.indexOf(end);
            if (at >= 0) {
                String args = pending.substring(0, at);
                calls.arguments(fenced ? stripTrailingNewline(args) : args, out);
                consume(at + end.length());
                if (fenced) {
                    mode = Mode.AFTER_ARGUMENTS;
                } else {
                    calls.end(out);
                    mode = Mode.CALLS;
                }
                return true;
            }
            int keep = Math.max(Markers.partial(pending, end), fenced && endsWithNewline() ? 1 : 0);
            calls.arguments(pending.substring(0, pending.length() - keep), out);
            consume(pending.length() - keep);
            return false;
        }

        private boolean afterArguments(ToolCallSink out) {
            skipWhitespace();
            if (startsWith(CALL_END)) {
                consume(CALL_END.length());
                calls.end(out);
                mode = Mode.CALLS;
                return true;
            }
            if (pending.isEmpty() || CALL_END.startsWith(pending.toString())) {
                return false;
            }
            calls.end(out);
            mode = Mode.CALLS;
            return true;
        }

        /** A header longer than any function name: not a call. */
        private boolean tooLong(ToolCallSink out) {
            if (pending.length() <= MAX_HEADER) {
                return false;
            }
            malformed(out);
            return true;
        }

        /** Not calls after all: what was held is content (a started call ends as it is). */
        private void malformed(ToolCallSink out) {
            out.rejected();
            if (calls.open()) {
                calls.end(out);
            } else if (calls.calls() == 0) {
                out.content(raw.toString());
            }
            raw.setLength(0);
            mode = Mode.TEXT;
        }

        @Override
        public void finish(ToolCallSink out) {
            switch (mode) {
                case TEXT -> {
                    if (!pending.isEmpty() && !(calls.calls() > 0 && Markers.blank(pending))) {
                        out.content(pending.toString());
                    }
                }
                case ARGUMENTS -> {
                    calls.arguments(pending.toString(), out);
                    calls.end(out);
                }
                default -> {
                    if (calls.open()) {
                        calls.end(out);
                    } else {
                        out.rejected();
                        if (calls.calls() == 0) {
                            out.content(raw.toString() + pending);
                        }
                    }
                }
            }
            pending.setLength(0);
        }

        private void skipWhitespace() {
            int i = 0;
            while (i < pending.length() && JsonCallScanner.ws(pending.charAt(i))) {
                i++;
            }
            consume(i);
        }

        private boolean startsWith(String s) {
            return pending.length() >= s.length() && pending.substring(0, s.length()).equals(s);
        }

        private void consume(int n) {
            raw.append(pending, 0, n);
            pending.delete(0, n);
        }

        private boolean endsWithNewline() {
            return !pending.isEmpty() && pending.charAt(pending.length() - 1) == '\n';
        }

        private static String stripTrailingNewline(String s) {
            return s.endsWith("\n") ? s.substring(0, s.length() - 1) : s;
        }
    }
}
