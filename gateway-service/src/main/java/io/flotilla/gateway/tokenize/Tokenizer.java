package io.flotilla.gateway.tokenize;

/**
 * Text ↔ token ids of one model. Implementations are immutable and thread-safe.
 *
 * <p>Decoding works one token at a time on bytes ({@link #tokenBytes}), because a token of a
 * byte-level BPE vocabulary may hold part of a UTF-8 character; {@link IncrementalDetokenizer} turns
 * a stream of ids into text without splitting characters.
 */
public interface Tokenizer {

    /** Tokenizer identity; part of the block-hash namespace, so it must equal what the workers hash with. */
    String id();

    /** Token ids of ordinary text: special-token markers in {@code text} are encoded as plain text. */
    int[] encode(String text);

    /** Prompt token ids must lie in {@code [0, vocabSize())}. */
    int vocabSize();

    /**
     * The bytes one token stands for in generated text: empty for control (special) tokens, which are
     * not rendered, and {@code null} for an id the tokenizer has no bytes for (unassigned or out of range).
     */
    byte[] tokenBytes(int id);
}
