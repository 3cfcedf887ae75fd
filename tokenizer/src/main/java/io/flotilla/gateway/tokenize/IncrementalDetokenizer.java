package io.flotilla.gateway.tokenize;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Turns one stream of generated token ids into text, chunk by chunk, never splitting a UTF-8
 * character across chunks: bytes of a character whose tail has not arrived yet are held back until
 * it does. Not thread-safe; one instance per request.
 *
 * <ul>
 *   <li>Special tokens render as nothing (their {@link Tokenizer#tokenBytes} are empty).</li>
 *   <li>Ids the tokenizer has no bytes for render as U+FFFD, one per id.</li>
 *   <li>Byte sequences that are not UTF-8 (random ids produce many) render as U+FFFD per malformed
 *       sequence, as Java's UTF-8 decoder with REPLACE does; the decoder never throws.</li>
 *   <li>{@link #finish()} renders a held-back incomplete tail as U+FFFD.</li>
 * </ul>
 * The concatenation of every chunk equals decoding all the bytes at once with replacement.
 */
public final class IncrementalDetokenizer {

    private static final byte[] REPLACEMENT = "\uFFFD".getBytes(StandardCharsets.UTF_8);

    private final Tokenizer tokenizer;
    private final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPLACE)
            .onUnmappableCharacter(CodingErrorAction.REPLACE);
    /** Bytes of an incomplete UTF-8 character at the end of what arrived so far (at most 3). */
    private byte[] pending = new byte[0];

    public IncrementalDetokenizer(Tokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    /** Text completed by {@code ids}; may be empty when only part of a character arrived. */
    public String push(int[] ids) {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(pending.length + ids.length * 4);
        bytes.writeBytes(pending);
        for (int id : ids) {
            byte[] b = tokenizer.tokenBytes(id);
            bytes.writeBytes(b == null ? REPLACEMENT : b);
        }
        byte[] all = bytes.toByteArray();
        int cut = completePrefix(all);
        pending = Arrays.copyOfRange(all, cut, all.length);
        return decode(all, cut);
    }

    /** Whatever is still held back, rendered as U+FFFD; the detokenizer is empty afterwards. */
    public String finish() {
        String rest = decode(pending, pending.length);
        pending = new byte[0];
        return rest;
    }

    /** Length of the longest prefix of {@code b} that does not end inside an incomplete character. */
    static int completePrefix(byte[] b) {
        int n = b.length;
        // A lead byte can be at most 3 bytes before the end and still be waiting for continuation bytes.
        for (int i = n - 1; i >= Math.max(0, n - 3); i--) {
            int v = b[i] & 0xff;
            if ((v & 0xC0) == 0x80) {
                continue; // continuation byte: keep looking for its lead
            }
            int need = v >= 0xF0 && v <= 0xF4 ? 4 : v >= 0xE0 && v <= 0xEF ? 3 : v >= 0xC2 && v <= 0xDF ? 2 : 1;
            return i + need > n ? i : n;
        }
        return n;
    }

    private String decode(byte[] b, int len) {
        if (len == 0) {
            return "";
        }
        try {
            decoder.reset();
            CharBuffer chars = decoder.decode(ByteBuffer.wrap(b, 0, len));
            return chars.toString();
        } catch (CharacterCodingException e) { // unreachable with REPLACE
            throw new IllegalStateException(e);
        }
    }
}
