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

    /**
     * True after a line feed that is followed by a character that is not white space. cl100k_base's
     * pre-tokenizer ({@code (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+})
     * cuts the text into pieces that BPE encodes one by one; a piece holding a line feed either ends with it
     * ({@code [\r\n]*}, {@code \s*[\r\n]+}) or is white space only, so the piece that holds {@code at - 1}
     * ends at {@code at}, and every piece before it is matched without looking past {@code at} (the only
     * look-ahead, {@code \s+(?!\S)}, is never reached for a run of white space that ends in a line feed:
     * {@code \s*[\r\n]+} takes it first). A chat template puts such a position between messages.
     */
    @Override
    public boolean splitsAt(CharSequence text, int at) {
        if (at <= 0 || at >= text.length() || text.charAt(at - 1) != '\n') {
            return false;
        }
        char next = text.charAt(at);
        return !Character.isWhitespace(next) && !Character.isSpaceChar(next) && next != '\u0085';
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
