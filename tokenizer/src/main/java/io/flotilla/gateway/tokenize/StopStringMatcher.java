package io.flotilla.gateway.tokenize;

import java.util.List;

/**
 * Finds the first occurrence of any stop string in a stream of text chunks. Text that could still
 * turn out to be the start of a stop string is held back until it is decided, so nothing after a
 * stop string (and no part of it) is ever released. Not thread-safe; one instance per request.
 */
public final class StopStringMatcher {

    /**
     * What a chunk released.
     *
     * @param text    text safe to send
     * @param stopped a stop string was found; {@code text} ends right before it and the stream is over
     */
    public record Step(String text, boolean stopped) {
    }

    private final List<String> stops;
    private String held = "";
    private boolean stopped;
    private String matched;

    public StopStringMatcher(List<String> stops) {
        for (String s : stops) {
            if (s.isEmpty()) {
                throw new IllegalArgumentException("stop strings must not be empty");
            }
        }
        this.stops = List.copyOf(stops);
    }

    public Step push(String chunk) {
        if (stopped) {
            return new Step("", true);
        }
        String text = held + chunk;
        int first = -1;
        String found = null;
        for (String s : stops) {
            int at = text.indexOf(s);
            if (at >= 0 && (first < 0 || at < first)) {
                first = at;
                found = s;
            }
        }
        if (first >= 0) {
            stopped = true;
            matched = found;
            held = "";
            return new Step(text.substring(0, first), true);
        }
        int keep = longestStopPrefixSuffix(text);
        held = text.substring(text.length() - keep);
        return new Step(text.substring(0, text.length() - keep), false);
    }

    /** The stop string that ended the text (the earliest, the first listed of those at one place), or null. */
    public String matched() {
        return matched;
    }

    /** The held-back text: at the end of the stream it was not the start of a stop string after all. */
    public String flush() {
        String rest = stopped ? "" : held;
        held = "";
        return rest;
    }

    /** Length of the longest suffix of {@code text} that is a proper prefix of some stop string. */
    private int longestStopPrefixSuffix(String text) {
        int best = 0;
        for (String s : stops) {
            for (int k = Math.min(s.length() - 1, text.length()); k > best; k--) {
                if (text.regionMatches(text.length() - k, s, 0, k)) {
                    best = k;
                    break;
                }
            }
        }
        return best;
    }
}
