package io.flotilla.gguf;

import java.util.Map;

/**
 * llama.cpp pre-tokenizers ({@code tokenizer.ggml.pre}) whose split equals a HuggingFace pre-tokenizer,
 * as regex source for a {@code Split}, or null for GPT-2's (HF's {@code ByteLevel} with
 * {@code use_regex}). llama.cpp (build 4916, {@code llama-vocab.cpp}) runs GPT-2's pattern through a
 * hand-written matcher that takes {@code \s+(?!\S)|\s+} together; it spells the case-insensitive
 * contractions of Llama 3 and Qwen2 as {@code '[sS]|…}, which is HF's {@code (?i:'s|…)}.
 */
enum PreTokenizer {
    GPT2("gpt-2", null, false),
    LLAMA3("llama-bpe", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", true),
    QWEN2("qwen2", "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+", false);

    /** Other names llama.cpp gives the same pre-tokenizer. */
    private static final Map<String, PreTokenizer> ALIASES = Map.of(
            "llama3", LLAMA3, "llama-v3", LLAMA3);

    final String ggufName;
    final String splitRegex;
    /** llama.cpp takes a word that is a whole token as it is, without merging (HF's {@code ignore_merges}). */
    final boolean ignoreMerges;

    PreTokenizer(String ggufName, String splitRegex, boolean ignoreMerges) {
        this.ggufName = ggufName;
        this.splitRegex = splitRegex;
        this.ignoreMerges = ignoreMerges;
    }

    static PreTokenizer of(String ggufName) {
        for (PreTokenizer p : values()) {
            if (p.ggufName.equals(ggufName)) {
                return p;
            }
        }
        PreTokenizer alias = ALIASES.get(ggufName);
        if (alias == null) {
            throw new IllegalArgumentException("tokenizer.ggml.pre '" + ggufName + "' is not supported (supported: "
                    + java.util.Arrays.stream(values()).map(p -> p.ggufName).toList() + " and " + ALIASES.keySet()
                    + "); give the model's own tokenizer.json instead");
        }
        return alias;
    }
}
