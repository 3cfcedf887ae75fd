package io.flotilla.gateway.toolcall;

import java.util.function.Supplier;

/**
 * Hermes and Qwen (2.5, 3, QwQ) tool calls: {@code <tool_call>\n{"name": "f", "arguments": {…}}\n</tool_call>},
 * one block per call, after optional text. The closing tag may be missing at the end of the output.
 * Whitespace between and after calls is not content.
 */
public final class HermesToolParser implements ToolCallParser {

    public static final String NAME = "hermes";
    static final String OPEN = "<tool_call>";
    static final String CLOSE = "</tool_call>";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ToolCallStream stream(Supplier<String> ids) {
        return new Stream(ids);
    }

    private static final class Stream implements ToolCallStream {

        private enum Mode { TEXT, CALL, AFTER_CALL }

        private final CallEmitter calls;
        private final StringBuilder pending = new StringBuilder();
        private final StringBuilder raw = new StringBuilder();
        private Mode mode = Mode.TEXT;
        private JsonCallScanner scanner;

        Stream(Supplier<String> ids) {
            this.calls = new CallEmitter(ids);
        }

        @Override
        public void push(String text, ToolCallSink out) {
            pending.append(text);
            run(out, false);
        }

        @Override
        public void finish(ToolCallSink out) {
            run(out, true);
            switch (mode) {
                case TEXT -> {
                    if (!(calls.calls() > 0 && Markers.blank(pending))) {
                        content(pending.toString(), out);
                    }
                }
                case CALL -> {
                    if (calls.open()) {
                        calls.end(out);
                    } else {
                        out.rejected();
                        content(OPEN + raw, out);
                    }
                }
                case AFTER_CALL -> {
                    calls.end(out);
                    if (!Markers.blank(pending)) {
                        content(pending.toString(), out);
                    }
                }
            }
            pending.setLength(0);
        }

        private void run(ToolCallSink out, boolean last) {
            boolean progress = true;
            while (progress && !pending.isEmpty()) {
                progress = switch (mode) {
                    case TEXT -> text(out, last);
                    case CALL -> call(out);
                    case AFTER_CALL -> afterCall(out);
                };
            }
        }

        /** Content up to the next call; holds back what may be the start of one. */
        private boolean text(ToolCallSink out, boolean last) {
            int at = pending.indexOf(OPEN);
            if (at >= 0) {
                String before = pending.substring(0, at);
                if (!(calls.calls() > 0 && Markers.blank(before))) {
                    content(before, out);
                }
                pending.delete(0, at + OPEN.length());
                mode = Mode.CALL;
                scanner = new JsonCallScanner();
                raw.setLength(0);
                return true;
            }
            if (last) {
                return false;
            }
            int keep = Markers.partial(pending, OPEN);
            if (calls.calls() > 0 && Markers.blank(pending.subSequence(0, pending.length() - keep))) {
                return false; // whitespace after a call: content only if something else follows
            }
            content(pending.substring(0, pending.length() - keep), out);
            pending.delete(0, pending.length() - keep);
            return false;
        }

        private boolean call(ToolCallSink out) {
            int used = 0;
            while (used < pending.length() && !scanner.done() && !scanner.failed()) {
                char c = pending.charAt(used++);
                raw.append(c);
                scanner.accept(c);
            }
            pending.delete(0, used);
            if (scanner.failed()) {
                if (calls.open()) {
                    calls.end(out);
                    pending.insert(0, raw.charAt(raw.length() - 1));
                } else {
                    out.rejected();
                    content(OPEN + raw, out); // not a call: what the model wrote is content
                }
                mode = Mode.TEXT;
                return true;
            }
            calls.progress(scanner, out);
            if (scanner.done()) {
                if (!calls.open() && scanner.name() == null) {
                    out.rejected();
                    content(OPEN + raw, out);
                    mode = Mode.TEXT;
                } else {
                    mode = Mode.AFTER_CALL;
                }
                return true;
            }
            return false;
        }

        /** After a call's object: whitespace, then the closing tag (or, when it is missing, more text). */
        private boolean afterCall(ToolCallSink out) {
            int start = 0;
            while (start < pending.length() && JsonCallScanner.ws(pending.charAt(start))) {
                start++;
            }
            CharSequence rest = pending.subSequence(start, pending.length());
            if (rest.toString().startsWith(CLOSE)) {
                pending.delete(0, start + CLOSE.length());
                mode = Mode.TEXT;
                return true;
            }
            if (rest.isEmpty() || CLOSE.startsWith(rest.toString())) {
                return false;
            }
            mode = Mode.TEXT; // no closing tag: the text that follows is content again
            return true;
        }

        private static void content(String text, ToolCallSink out) {
            if (!text.isEmpty()) {
                out.content(text);
            }
        }
    }
}
