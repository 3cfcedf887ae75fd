package io.flotilla.gguf;

import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * HuggingFace tokenizer files for a byte-level BPE vocabulary: {@code tokenizer.json} (a {@code BPE}
 * model with a {@code ByteLevel} pre-tokenizer and decoder, control and user-defined tokens as added
 * tokens) and {@code tokenizer_config.json} (special tokens, {@code add_bos_token}, {@code chat_template},
 * {@code name_or_path}), which is what the gateway loads from a model directory. The files tokenize as
 * llama.cpp (build 4916) tokenizes the same vocabulary from a GGUF: same pre-tokenizer split, same merge
 * order, added tokens matched in text first; no normalizer (llama.cpp applies none to BPE vocabularies,
 * where the model's own tokenizer.json may have NFC); no BOS from the tokenizer (a chat template puts
 * it in the text; {@code add_bos_token} says what llama.cpp would add to raw text).
 *
 * <p>From a GGUF a user brings, {@link #vocabulary(GgufFile, String)} takes a GPT-2-style vocabulary
 * ({@code tokenizer.ggml.model = gpt2}) with one of the pre-tokenizers in {@link PreTokenizer};
 * SentencePiece vocabularies ({@code llama}) and others are refused with a one-line reason.
 */
public final class TokenizerFiles {

    public static final String TOKENIZER_JSON = "tokenizer.json";
    public static final String TOKENIZER_CONFIG = "tokenizer_config.json";

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Two-space indent, {@code "key": value}, {@code \n} on every platform: as HF writes these files. */
    private static final ObjectWriter PRETTY = JSON.writer(new DefaultPrettyPrinter()
            .withSeparators(Separators.createDefaultInstance().withObjectFieldValueSpacing(Separators.Spacing.AFTER))
            .withObjectIndenter(new DefaultIndenter("  ", "\n"))
            .withArrayIndenter(new DefaultIndenter("  ", "\n")));
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    /** The files written. */
    public record Written(Path tokenizerJson, Path tokenizerConfig) {
    }

    private TokenizerFiles() {
    }

    /** Reads a GGUF's vocabulary and writes its tokenizer files into {@code dir} (created if missing). */
    public static Written write(Path ggufFile, Path dir) throws IOException {
        GgufFile gguf = GgufReader.read(ggufFile);
        String stem = ggufFile.getFileName().toString().replaceFirst("\\.gguf$", "");
        try {
            return write(vocabulary(gguf, gguf.string("general.name").orElse(stem)), dir);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(ggufFile + ": " + e.getMessage(), e);
        }
    }

    /** Writes {@code tokenizer.json} and {@code tokenizer_config.json} into {@code dir} (created if missing). */
    public static Written write(BpeVocabulary vocab, Path dir) throws IOException {
        Files.createDirectories(dir);
        Written written = new Written(dir.resolve(TOKENIZER_JSON), dir.resolve(TOKENIZER_CONFIG));
        writeJson(written.tokenizerJson(), tokenizerJson(vocab));
        writeJson(written.tokenizerConfig(), tokenizerConfig(vocab));
        return written;
    }

    /**
     * The vocabulary of a GGUF with a GPT-2-style BPE tokenizer.
     *
     * @param name the tokenizer's name ({@code name_or_path})
     * @throws IllegalArgumentException for a vocabulary these files cannot reproduce, saying why in one line
     */
    public static BpeVocabulary vocabulary(GgufFile gguf, String name) {
        String model = gguf.string("tokenizer.ggml.model")
                .orElseThrow(() -> new IllegalArgumentException("the GGUF has no tokenizer (no tokenizer.ggml.model)"));
        if (model.equals("llama")) {
            throw new IllegalArgumentException("its tokenizer is SentencePiece (tokenizer.ggml.model = llama), which is"
                    + " not converted; put the model's tokenizer.json (from its HuggingFace repository) next to it");
        }
        if (!model.equals("gpt2")) {
            throw new IllegalArgumentException("tokenizer.ggml.model '" + model + "' is not supported (only gpt2-style"
                    + " byte-level BPE is); put the model's tokenizer.json (from its HuggingFace repository) next to it");
        }
        String preName = gguf.string("tokenizer.ggml.pre").orElseThrow(() -> new IllegalArgumentException(
                "no tokenizer.ggml.pre (an old conversion, which llama.cpp tokenizes with a fallback regex); re-convert it"));
        PreTokenizer pre = PreTokenizer.of(preName);
        List<String> tokens = gguf.require("tokenizer.ggml.tokens").asStrings();
        int[] types = gguf.get("tokenizer.ggml.token_type").map(GgufValue::asInts).orElseGet(() -> {
            int[] normal = new int[tokens.size()];
            java.util.Arrays.fill(normal, BpeVocabulary.NORMAL);
            return normal;
        });
        List<String> merges = gguf.require("tokenizer.ggml.merges").asStrings();
        boolean addBos = gguf.bool("tokenizer.ggml.add_bos_token").orElse(pre == PreTokenizer.LLAMA3);
        return new BpeVocabulary(name, pre.ggufName, tokens, types, merges, id(gguf, "bos"), id(gguf, "eos"),
                id(gguf, "padding"), addBos, gguf.string("tokenizer.chat_template").orElse(null),
                gguf.contextLength().orElse(0L));
    }

    private static int id(GgufFile gguf, String which) {
        return gguf.integer("tokenizer.ggml." + which + "_token_id").map(Math::toIntExact).orElse(-1);
    }

    static ObjectNode tokenizerJson(BpeVocabulary vocab) {
        PreTokenizer pre = PreTokenizer.of(vocab.pre());
        ObjectNode root = NODES.objectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        for (int id = 0; id < vocab.tokens().size(); id++) {
            if (vocab.isAdded(id)) {
                added.addObject().put("id", id).put("content", vocab.tokens().get(id)).put("single_word", false)
                        .put("lstrip", false).put("rstrip", false).put("normalized", false)
                        .put("special", vocab.isSpecial(id));
            }
        }
        root.putNull("normalizer");
        if (pre.splitRegex == null) {
            root.set("pre_tokenizer", byteLevel(true));
        } else {
            ObjectNode seq = root.putObject("pre_tokenizer").put("type", "Sequence");
            ArrayNode steps = seq.putArray("pretokenizers");
            ObjectNode split = steps.addObject().put("type", "Split");
            split.putObject("pattern").put("Regex", pre.splitRegex);
            split.put("behavior", "Isolated").put("invert", false);
            steps.add(byteLevel(false));
        }
        root.putNull("post_processor");
        root.set("decoder", byteLevel(true));
        ObjectNode model = root.putObject("model");
        model.put("type", "BPE").putNull("dropout");
        model.putNull("unk_token");
        model.putNull("continuing_subword_prefix");
        model.putNull("end_of_word_suffix");
        model.put("fuse_unk", false).put("byte_fallback", false).put("ignore_merges", pre.ignoreMerges);
        ObjectNode v = model.putObject("vocab");
        for (int id = 0; id < vocab.tokens().size(); id++) {
            v.put(vocab.tokens().get(id), id); // a repeated token keeps its last id, as in llama.cpp's token_to_id
        }
        ArrayNode merges = model.putArray("merges");
        vocab.merges().forEach(merges::add);
        return root;
    }

    private static ObjectNode byteLevel(boolean useRegex) {
        return NODES.objectNode().put("type", "ByteLevel").put("add_prefix_space", false).put("trim_offsets", true)
                .put("use_regex", useRegex);
    }

    static ObjectNode tokenizerConfig(BpeVocabulary vocab) {
        ObjectNode root = NODES.objectNode();
        root.put("add_bos_token", vocab.addBos());
        root.put("add_eos_token", false);
        putToken(root, "bos_token", vocab.token(vocab.bosId()));
        putToken(root, "eos_token", vocab.token(vocab.eosId()));
        putToken(root, "pad_token", vocab.token(vocab.padId()));
        if (vocab.chatTemplate() != null) {
            root.put("chat_template", vocab.chatTemplate());
        }
        root.put("clean_up_tokenization_spaces", false);
        if (vocab.contextLength() > 0) {
            root.put("model_max_length", vocab.contextLength());
        }
        root.put("name_or_path", vocab.name());
        root.put("tokenizer_class", "PreTrainedTokenizerFast");
        return root;
    }

    private static void putToken(ObjectNode root, String key, String token) {
        if (token == null) {
            root.putNull(key);
        } else {
            root.put(key, token);
        }
    }

    private static void writeJson(Path file, ObjectNode json) throws IOException {
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        Files.writeString(tmp, PRETTY.writeValueAsString(json) + "\n");
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
