package io.flotilla.gateway.generation;

import java.util.Arrays;

/**
 * The tokens generated so far, as an immutable value that appends in amortised O(1): versions share
 * one buffer, each reading only its own first {@code length} ids. Only the newest version may append
 * in place (the request's fold is the only writer, and it always appends to its latest result); an
 * append to an older version copies, so no version ever sees another's ids change.
 */
public final class TokenLog {

    public static final TokenLog EMPTY = new TokenLog(new Buffer(new int[0]), 0);

    private static final class Buffer {
        int[] ids;
        int used;

        Buffer(int[] ids) {
            this.ids = ids;
        }
    }

    private final Buffer buffer;
    private final int length;

    private TokenLog(Buffer buffer, int length) {
        this.buffer = buffer;
        this.length = length;
    }

    public int length() {
        return length;
    }

    public TokenLog append(int[] more) {
        if (more.length == 0) {
            return this;
        }
        synchronized (buffer) {
            Buffer b = buffer;
            if (b.used != length) { // an older version: copy
                b = new Buffer(Arrays.copyOf(buffer.ids, Math.max(16, (length + more.length) * 2)));
                b.used = length;
            } else if (length + more.length > b.ids.length) {
                b.ids = Arrays.copyOf(b.ids, Math.max(16, Math.max(b.ids.length * 2, length + more.length)));
            }
            System.arraycopy(more, 0, b.ids, length, more.length);
            b.used = length + more.length;
            return new TokenLog(b, b.used);
        }
    }

    /** {@code prefix} followed by these tokens: what a new worker continues from. */
    public int[] after(int[] prefix) {
        synchronized (buffer) {
            int[] out = Arrays.copyOf(prefix, prefix.length + length);
            System.arraycopy(buffer.ids, 0, out, prefix.length, length);
            return out;
        }
    }
}
