package io.flotilla.gateway.reasoning;

/**
 * Splits one streamed output into reasoning and content ({@link ReasoningParser} says how). Text that
 * may be the start of a tag is held back until it is decided; the newlines a model writes right
 * after {@code </think>} are not content. Not thread-safe; one per output, fed in order.
 */
public final class ReasoningStream {

    /** Receives the split text in order. */
    public interface Sink {
        void reasoning(String text);

        void content(String text);
    }

    private enum Mode { UNDECIDED, REASONING, AFTER_END, CONTENT }

    private final ReasoningParser parser;
    private final StringBuilder pending = new StringBuilder();
    private Mode mode;

    ReasoningStream(ReasoningParser parser) {
        this.parser = parser;
        this.mode = Mode.UNDECIDED;
    }

    /** Whether text now goes to reasoning (for counting reasoning tokens). */
    public boolean inReasoning() {
        return mode == Mode.REASONING || (mode == Mode.UNDECIDED && parser.startsInReasoning());
    }

    public void push(String text, Sink out) {
        if (mode == Mode.CONTENT) {
            out.content(text);
            return;
        }
        pending.append(text);
        boolean progress = true;
        while (progress && !pending.isEmpty()) {
            progress = switch (mode) {
                case UNDECIDED -> decide(out);
                case REASONING -> reasoning(out);
                case AFTER_END -> afterEnd(out);
                case CONTENT -> {
                    out.content(pending.toString());
                    pending.setLength(0);
                    yield false;
                }
            };
        }
    }

    /** Whether the output opens with the start tag (leading whitespace aside). */
    private boolean decide(Sink out) {
        int i = 0;
        while (i < pending.length() && Character.isWhitespace(pending.charAt(i))) {
            i++;
        }
        String rest = pending.substring(i);
        String start = parser.startTag();
        if (rest.startsWith(start)) {
            pending.delete(0, i + start.length());
            mode = Mode.REASONING;
            return true;
        }
        if (start.startsWith(rest)) {
            return false; // maybe the tag, maybe not yet
        }
        mode = parser.startsInReasoning() ? Mode.REASONING : Mode.CONTENT;
        return true;
    }

    private boolean reasoning(Sink out) {
        String end = parser.endTag();
        int at = pending.indexOf(end);
        if (at >= 0) {
            if (at > 0) {
                out.reasoning(pending.substring(0, at));
            }
            pending.delete(0, at + end.length());
            mode = Mode.AFTER_END;
            return true;
        }
        int keep = partial(pending, end);
        if (pending.length() > keep) {
            out.reasoning(pending.substring(0, pending.length() - keep));
            pending.delete(0, pending.length() - keep);
        }
        return false;
    }

    private boolean afterEnd(Sink out) {
        int i = 0;
        while (i < pending.length() && (pending.charAt(i) == '\n' || pending.charAt(i) == '\r')) {
            i++;
        }
        pending.delete(0, i);
        if (pending.isEmpty()) {
            return false;
        }
        mode = Mode.CONTENT;
        return true;
    }

    /** The output ended: held-back text goes where it was heading. */
    public void finish(Sink out) {
        if (pending.isEmpty()) {
            return;
        }
        if (mode == Mode.REASONING || (mode == Mode.UNDECIDED && parser.startsInReasoning())) {
            out.reasoning(pending.toString());
        } else if (mode != Mode.AFTER_END) {
            out.content(pending.toString());
        }
        pending.setLength(0);
    }

    private static int partial(CharSequence text, String marker) {
        for (int n = Math.min(text.length(), marker.length() - 1); n > 0; n--) {
            if (marker.startsWith(text.subSequence(text.length() - n, text.length()).toString())) {
                return n;
            }
        }
        return 0;
    }
}
