package io.flotilla.gateway.tokenize;

import com.knuddels.jtokkit.Encodings;
import com.knuddels.jtokkit.api.Encoding;
import com.knuddels.jtokkit.api.EncodingType;
import com.knuddels.jtokkit.api.IntArrayList;

import java.util.Set;

/**
 * OpenAI's {@code cl100k_base} BPE (jtokkit), the tokenizer of the simulated engine.
 *
 * <p>Ids 0…100255 are ordinary tokens; 100257 {@code <|endoftext|>}, 100258–100260 (FIM) and 100276
 * {@code <|endofprompt|>} are special tokens, rendered as nothing in output (vLLM's default
 * {@code skip_special_tokens}); 100256 and 100261–100275 are unassigned. The simulated engine samples
 * ids in {@code [0, 100277)}, so the vocabulary size for prompts is 100277.
 */
public final class Cl100kTokenizer implements Tokenizer {

    public static final String ID = "cl100k_base";
    public static final int VOCAB_SIZE = 100277;
    private static final Set<Integer> SPECIAL = Set.of(100257, 100258, 100259, 100260, 100276);
    private static final byte[] NONE = new byte[0];

    private final Encoding encoding;
    /** Bytes of every id below VOCAB_SIZE, computed once; null for unassigned ids. */
    private final byte[][] bytes = new byte[VOCAB_SIZE][];

    public Cl100kTokenizer() {
        this.encoding = Encodings.newDefaultEncodingRegistry().getEncoding(EncodingType.CL100K_BASE);
        IntArrayList one = new IntArrayList(1);
        one.add(0);
        for (int id = 0; id < VOCAB_SIZE; id++) {
            if (SPECIAL.contains(id)) {
                bytes[id] = NONE;
                continue;
            }
            one.set(0, id);
            try {
                bytes[id] = encoding.decodeBytes(one);
            } catch (RuntimeException unassigned) { // jtokkit throws for ids it has no bytes for
                bytes[id] = null;
            }
        }
    }

    @Override
    public String id() {
        return ID;
    }

    @Override
    public int[] encode(String text) {
        return encoding.encodeOrdinary(text).toArray();
    }

    @Override
    public int vocabSize() {
        return VOCAB_SIZE;
    }

    @Override
    public byte[] tokenBytes(int id) {
        return id >= 0 && id < VOCAB_SIZE ? bytes[id] : null;
    }
}
