package io.flotilla.gateway.toolcall;

/** Finding markers in streamed text that may arrive split at any character. */
final class Markers {

    private Markers() {
    }

    /**
     * Length of the longest suffix of {@code text} that is a proper prefix of {@code marker}: text that
     * must be held back because the marker may be completing.
     */
    static int partial(CharSequence text, String marker) {
        int max = Math.min(text.length(), marker.length() - 1);
        for (int n = max; n > 0; n--) {
            boolean match = true;
            for (int i = 0; i < n; i++) {
                if (text.charAt(text.length() - n + i) != marker.charAt(i)) {
                    match = false;
                    break;
                }
            }
            if (match) {
                return n;
            }
        }
        return 0;
    }

    static boolean blank(CharSequence s) {
        for (int i = 0; i < s.length(); i++) {
            if (!JsonCallScanner.ws(s.charAt(i))) {
                return false;
            }
        }
        return true;
    }
}
