package io.flotilla.gateway.toolcall;

import java.security.SecureRandom;
import java.util.function.Supplier;

/** Tool call ids, random as OpenAI's are (clients send them back with the tool's result). */
public final class ToolCallIds {

    private static final char[] ALPHANUMERIC = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".toCharArray();
    private static final SecureRandom RANDOM = new SecureRandom();

    private ToolCallIds() {
    }

    /** {@code call_} and 24 letters and digits. */
    public static Supplier<String> openAi() {
        return () -> "call_" + random(24);
    }

    /** Nine letters and digits: Mistral's chat templates refuse other tool call ids. */
    public static Supplier<String> mistral() {
        return () -> random(9);
    }

    private static String random(int n) {
        char[] out = new char[n];
        for (int i = 0; i < n; i++) {
            out[i] = ALPHANUMERIC[RANDOM.nextInt(ALPHANUMERIC.length)];
        }
        return new String(out);
    }
}
