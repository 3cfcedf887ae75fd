package io.flotilla.protocol.sse;

/**
 * Server-sent events from a stream of lines (line terminators already removed), per the WHATWG
 * event-stream rules that OpenAI-compatible servers use: {@code data:} lines accumulate (joined with
 * {@code \n}, one leading space after the colon dropped), a blank line dispatches the event, lines
 * starting with {@code :} are comments, {@code event:} names the next event, other fields are
 * ignored. An event still pending when the stream ends is dispatched by {@link #end}. Each event
 * carries the arrival time of its first {@code data:} line, which is when the client saw it.
 *
 * <p>Not thread-safe: one decoder per stream, fed in order.
 */
public final class SseDecoder {

    /** Receives complete events. */
    public interface Listener {
        void onEvent(String type, String data, long receivedNanos);
    }

    private final Listener listener;
    private final StringBuilder data = new StringBuilder();
    private boolean hasData;
    private String type = "message";
    private long firstLineNanos;

    public SseDecoder(Listener listener) {
        this.listener = listener;
    }

    /** Feeds one line received at {@code nanos}. */
    public void line(String line, long nanos) {
        if (line.isEmpty()) {
            dispatch();
            return;
        }
        if (line.charAt(0) == ':') {
            return;
        }
        int colon = line.indexOf(':');
        String field = colon < 0 ? line : line.substring(0, colon);
        String value = colon < 0 ? "" : line.substring(colon + 1);
        if (value.startsWith(" ")) {
            value = value.substring(1);
        }
        switch (field) {
            case "data" -> {
                if (hasData) {
                    data.append('\n');
                } else {
                    firstLineNanos = nanos;
                    hasData = true;
                }
                data.append(value);
            }
            case "event" -> type = value.isEmpty() ? "message" : value;
            default -> { }
        }
    }

    /** The stream ended: dispatches an event that was not followed by a blank line. */
    public void end() {
        dispatch();
    }

    private void dispatch() {
        if (hasData) {
            String payload = data.toString();
            String t = type;
            data.setLength(0);
            hasData = false;
            type = "message";
            listener.onEvent(t, payload, firstLineNanos);
        } else {
            type = "message";
        }
    }
}
