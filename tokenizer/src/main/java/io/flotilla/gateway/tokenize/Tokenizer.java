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

    /**
     * Token ids of {@code text} without adding special tokens (no BOS/EOS): what a chat prompt is encoded
     * with, since the chat template writes those itself. Whether special-token markers written in the text
     * become their special ids is the tokenizer's rule: {@code cl100k_base} encodes them as plain text;
     * HuggingFace tokenizers turn added tokens into their ids, as transformers and vLLM do.
     */
    int[] encode(String text);

    /**
     * Token ids of a text-completion prompt: {@link #encode} plus whatever special tokens the tokenizer
     * adds to a single sequence (Llama's BOS), as vLLM encodes {@code /v1/completions} prompts.
     */
    default int[] encodeWithSpecialTokens(String text) {
        return encode(text);
    }

    /**
     * Whether {@code encode(text)} is guaranteed to equal {@code encode(text[0, at))} followed by
     * {@code encode(text[at, end))}: no token of {@code text} spans {@code at}, and tokenizing the part
     * before {@code at} alone gives the same tokens. Conservative: false means "not known", never "no".
     * {@link ChatPromptCache} reuses the tokens of a conversation's history only at such a position.
     */
    default boolean splitsAt(CharSequence text, int at) {
        return false;
    }

    /** Prompt token ids must lie in {@code [0, vocabSize())}. */
    int vocabSize();

    /**
     * The bytes one token stands for in generated text: empty for control (special) tokens, which are
     * not rendered, and {@code null} for an id the tokenizer has no bytes for (unassigned or out of range).
     */
    byte[] tokenBytes(int id);
}
