package io.flotilla.gateway.toolcall;

/**
 * A run of call objects as some formats write them: a JSON array {@code [{…}, {…}]} (Mistral, a
 * {@code tool_choice: required} answer) or objects separated by {@code ;} (Llama 3). Reads what it is
 * given, sends calls through a {@link CallEmitter}, and stops at the end of the run; an object that
 * is not a call before its name was sent ends the run with that object's text returned as content.
 */
final class JsonCallList {

    enum State { OPEN, BETWEEN, OBJECT, CLOSED, FAILED }

    private final boolean bracketed;
    private final char separator;
    private final CallEmitter calls;
    private final StringBuilder objectText = new StringBuilder();
    private State state;
    private JsonCallScanner scanner;

    /** @param bracketed a JSON array ({@code [}, {@code ,}, {@code ]}) rather than objects separated by {@code separator} */
    JsonCallList(boolean bracketed, char separator, CallEmitter calls) {
        this.bracketed = bracketed;
        this.separator = separator;
        this.calls = calls;
        this.state = bracketed ? State.OPEN : State.BETWEEN;
    }

    State state() {
        return state;
    }

    boolean ended() {
        return state == State.CLOSED || state == State.FAILED;
    }

    /** Text of the object being read when the run failed (to be returned as content). */
    String failedText() {
        return objectText.toString();
    }

    /**
     * Reads {@code text} from {@code from} until the run ends or the text does.
     *
     * @return the characters consumed; the rest (after the run) is for the caller
     */
    int feed(CharSequence text, int from, ToolCallSink out) {
        int i = from;
        while (i < text.length() && !ended()) {
            char c = text.charAt(i);
            switch (state) {
                case OPEN -> {
                    if (c == '[') {
                        state = State.BETWEEN;
                    } else if (!JsonCallScanner.ws(c)) {
                        state = State.FAILED;
                        objectText.append(c);
                    }
                    i++;
                }
                case BETWEEN -> {
                    if (c == '{') {
                        scanner = new JsonCallScanner();
                        objectText.setLength(0);
                        state = State.OBJECT;
                        continue; // the scanner reads the brace
                    }
                    if (JsonCallScanner.ws(c) || c == separator) {
                        i++;
                    } else if (bracketed && c == ']') {
                        state = State.CLOSED;
                        i++;
                    } else if (bracketed) {
                        objectText.setLength(0);
                        objectText.append(c);
                        state = State.FAILED; // an array of calls holds nothing else
                        i++;
                    } else {
                        state = State.CLOSED; // the run is over; this text is not part of it
                    }
                }
                case OBJECT -> {
                    objectText.append(c);
                    scanner.accept(c);
                    i++;
                    if (scanner.failed() || (scanner.done() && scanner.name() == null && !calls.open())) {
                        if (calls.open()) {
                            calls.end(out);
                        }
                        state = State.FAILED;
                    } else if (scanner.done()) {
                        calls.progress(scanner, out);
                        state = State.BETWEEN;
                    }
                }
                default -> i++;
            }
        }
        if (state == State.OBJECT) {
            calls.progress(scanner, out);
        }
        return i - from;
    }

    /** The output ended inside the run: an open call ends as it is. */
    void finish(ToolCallSink out) {
        if (state == State.OBJECT && calls.open()) {
            calls.end(out);
        }
    }

    /** Whether the output ended before the run's object named its call (its text is then content). */
    boolean endedUnnamed() {
        return state == State.OBJECT && !calls.open();
    }
}
