package io.flotilla.worker.engine.sim;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The text side of a simulated engine whose model uses {@code cl100k_base} (the gateway's tokenizer
 * for simulated models): scripted replies and structured output are written as text and encoded
 * here, prompts are decoded here to match script rules. Thread-safe.
 */
final class SimText {

    static final String CL100K = "cl100k_base";
    private static final Encoding ENCODING = Encodings.newLazyEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);

    /** Ids from here on are special or unassigned in cl100k_base; they decode as nothing, as in the gateway. */
    private static final int FIRST_SPECIAL = 100256;
    /** The bytes of every id (empty for ids without any: special tokens, unassigned ids), built on first use. */
    private static volatile byte[][] bytes;

    private SimText() {
    }

    /** The text side of an engine with this tokenizer and vocabulary, or null when it has none. */
    static SimText of(String tokenizerId, int vocabSize) {
        return CL100K.equals(tokenizerId) && vocabSize == SimEngineConfig.DEFAULT_VOCAB_SIZE ? new SimText() : null;
    }

    /** Token ids of {@code text}, special-token markers encoded as ordinary text (as the gateway does). */
    int[] encode(String text) {
        return ENCODING.encodeOrdinary(text).toArray();
    }

    /** The text of {@code ids} (invalid UTF-8 as U+FFFD); ids without bytes decode as nothing. */
    String decode(int[] ids) {
        byte[][] table = table();
        ByteArrayOutputStream out = new ByteArrayOutputStream(ids.length * 4);
        for (int id : ids) {
            if (id >= 0 && id < table.length) {
                out.writeBytes(table[id]);
            }
        }
        return out.toString(StandardCharsets.UTF_8);
    }

    private static byte[][] table() {
        byte[][] t = bytes;
        if (t == null) {
            t = new byte[SimEngineConfig.DEFAULT_VOCAB_SIZE][];
            IntArrayList one = new IntArrayList(1);
            one.add(0);
            for (int id = 0; id < t.length; id++) {
                if (id >= FIRST_SPECIAL) {
                    t[id] = new byte[0];
                    continue;
                }
                one.set(0, id);
                try {
                    t[id] = ENCODING.decodeBytes(one);
                } catch (RuntimeException noBytes) { // jtokkit throws for ids it has no bytes for
                    t[id] = new byte[0];
                }
            }
            bytes = t;
        }
        return t;
    }
}
