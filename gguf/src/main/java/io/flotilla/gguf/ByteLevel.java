package io.flotilla.gguf;

import java.nio.charset.StandardCharsets;

/**
 * GPT-2's byte-to-unicode table ({@code bytes_to_unicode}): each of the 256 byte values stands for one
 * printable character, so byte-level BPE tokens are strings without spaces or control characters. Bytes
 * {@code !}..{@code ~}, {@code ¡}..{@code ¬} and {@code ®}..{@code ÿ} stand for themselves; the others
 * take the characters from U+0100 on, in byte order (space is {@code Ġ}, newline {@code Ċ}).
 */
public final class ByteLevel {

    private static final char[] CHAR_OF_BYTE = table();

    private ByteLevel() {
    }

    static char charOf(int b) {
        return CHAR_OF_BYTE[b & 0xFF];
    }

    /** The byte-level form of a text's UTF-8 bytes. */
    static String encode(String text) {
        byte[] utf8 = text.getBytes(StandardCharsets.UTF_8);
        StringBuilder sb = new StringBuilder(utf8.length);
        for (byte b : utf8) {
            sb.append(charOf(b));
        }
        return sb.toString();
    }

    /**
     * The bytes a byte-level token stands for (the inverse of {@link #encode}'s mapping); null when the token has a
     * character outside the table (an added token written as plain text).
     */
    public static byte[] decode(String token) {
        byte[] out = new byte[token.length()];
        for (int i = 0; i < token.length(); i++) {
            int b = byteOf(token.charAt(i));
            if (b < 0) {
                return null;
            }
            out[i] = (byte) b;
        }
        return out;
    }

    private static int byteOf(char c) {
        for (int b = 0; b < 256; b++) {
            if (CHAR_OF_BYTE[b] == c) {
                return b;
            }
        }
        return -1;
    }

    private static char[] table() {
        char[] table = new char[256];
        int next = 256;
        for (int b = 0; b < 256; b++) {
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            table[b] = printable ? (char) b : (char) next++;
        }
        return table;
    }
}
