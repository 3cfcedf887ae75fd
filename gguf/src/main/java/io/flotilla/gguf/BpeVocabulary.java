package io.flotilla.gguf;

import java.util.List;
import java.util.Objects;

/**
 * A byte-level BPE vocabulary as GGUF stores it ({@code tokenizer.ggml.model = gpt2}) and as both
 * tokenizer files are written from it.
 *
 * @param name           the tokenizer's name ({@code name_or_path}; the gateway's block-hash namespace)
 * @param pre            llama.cpp's pre-tokenizer name ({@code tokenizer.ggml.pre}), one of {@link PreTokenizer}'s
 * @param tokens         token strings by id, in byte-level form
 * @param types          llama.cpp token types by id ({@link #NORMAL}, {@link #CONTROL}, …)
 * @param merges         {@code "left right"}, highest priority first
 * @param bosId          beginning-of-sequence id, or -1
 * @param eosId          end-of-sequence id, or -1
 * @param padId          padding id, or -1
 * @param addBos         whether a BOS is put before every text (llama.cpp's {@code add_bos_token})
 * @param chatTemplate   Jinja chat template, or null
 * @param contextLength  the model's context length (tokenizer_config's {@code model_max_length}), or 0
 */
public record BpeVocabulary(String name, String pre, List<String> tokens, int[] types, List<String> merges,
                            int bosId, int eosId, int padId, boolean addBos, String chatTemplate,
                            long contextLength) {

    public static final int NORMAL = 1;
    public static final int UNKNOWN = 2;
    public static final int CONTROL = 3;
    public static final int USER_DEFINED = 4;
    public static final int UNUSED = 5;
    public static final int BYTE = 6;

    public BpeVocabulary {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(pre, "pre");
        tokens = List.copyOf(tokens);
        merges = List.copyOf(merges);
        types = types.clone();
        if (types.length != tokens.size()) {
            throw new IllegalArgumentException(types.length + " token types for " + tokens.size() + " tokens");
        }
        if (addBos && bosId < 0) {
            throw new IllegalArgumentException("add_bos_token is true, but there is no bos token");
        }
    }

    /** A token's string, or null for -1. */
    public String token(int id) {
        return id < 0 ? null : tokens.get(id);
    }

    /** Tokens matched in text before pre-tokenization (control, user-defined and unknown tokens). */
    public boolean isAdded(int id) {
        return types[id] == CONTROL || types[id] == USER_DEFINED || types[id] == UNKNOWN;
    }

    /** Added tokens that stand for no text (control and unknown). */
    public boolean isSpecial(int id) {
        return types[id] == CONTROL || types[id] == UNKNOWN;
    }
}
