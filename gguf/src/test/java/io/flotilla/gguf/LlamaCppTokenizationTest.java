package io.flotilla.gguf;

import ai.djl.huggingface.tokenizers.HuggingFaceTokenizer;
import de.kherud.llama.InferenceParameters;
import de.kherud.llama.LlamaModel;
import de.kherud.llama.LlamaOutput;
import de.kherud.llama.args.LogFormat;
import de.kherud.llama.ModelParameters;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The claim of the generated tiny model: llama.cpp (java-llama.cpp 4.2.0, build 4916) tokenizes the
 * generated GGUF exactly as the HuggingFace tokenizers library (the gateway's) tokenizes the generated
 * {@code tokenizer.json}; and the same for tokenizer files made from a GGUF with the other supported
 * pre-tokenizers. Neither side adds a BOS: {@code LlamaModel.encode} never adds special tokens, and the
 * gateway encodes without them (the chat template writes what the model needs).
 */
class LlamaCppTokenizationTest {

    /** ASCII, contractions, whitespace runs, newlines, digits, punctuation, non-ASCII, special tokens. */
    static final List<String> TEXTS = List.of(
            "Hello, world!",
            "The quick brown fox jumps over the lazy dog.",
            "It's what they'll say: we've done it, I'd agree. IT'S LOUD, WE'RE HERE.",
            "  leading spaces, and trailing   ",
            "     ",
            "tabs\tand\t\ttabs \t mixed",
            "line one\nline two\n\n\nline five\r\nline six\n",
            "\n",
            "digits 0 12 345 6789 3.14159 1,000,000 2026-12-03 12345678901234567890",
            "punctuation!!! ??? ... --- (brackets) [more] {braces} <angle> @#$%^&*_+=|\\/~`",
            "héllo wörld — 日本語 🙂",
            "Эскадра вышла из гавани; Ελληνικά γράμματα; ¿Dónde está el capitán? 🚢⚓",
            "public static void main(String[] args) {\n    return;\n}\n",
            "<|im_start|>user\nHi there<|im_end|>\n<|im_start|>assistant\n",
            "text<|endoftext|>more text<|im_end|>and<|im_start|>",
            "almost special: <|im_start| and |im_end|> and <|endoftext",
            "");

    @TempDir
    static Path dir;

    static TinyModel.Written tiny;
    static LlamaModel model;
    static HuggingFaceTokenizer hf;

    @BeforeAll
    static void load() throws IOException {
        // java-llama.cpp deletes llama*/jllama* entries of its temp folder on first load: give it its own.
        if (System.getProperty("de.kherud.llama.tmpdir") == null) {
            System.setProperty("de.kherud.llama.tmpdir", dir.resolve("jllama").toString());
        }
        Files.createDirectories(Path.of(System.getProperty("de.kherud.llama.tmpdir")));
        System.setProperty("ai.djl.offline", "true");
        System.setProperty("OPT_OUT_TRACKING", "true");
        LlamaModel.setLogger(LogFormat.TEXT, (level, message) -> { });

        long start = System.nanoTime();
        tiny = TinyModel.write(dir.resolve("tiny"), 42);
        long written = System.nanoTime();
        model = load(tiny.gguf());
        long loaded = System.nanoTime();
        System.out.printf("tiny model: %,d bytes, written in %d ms, loaded by llama.cpp in %d ms%n",
                Files.size(tiny.gguf()), (written - start) / 1_000_000, (loaded - written) / 1_000_000);
        hf = tokenizer(tiny.tokenizerJson());
    }

    @AfterAll
    static void close() {
        if (hf != null) {
            hf.close();
        }
        if (model != null) {
            model.close();
        }
    }

    @Test
    void llamaCppAndTheHuggingFaceTokenizerGiveTheSameIds() {
        for (String text : TEXTS) {
            assertThat(model.encode(text)).as("token ids of %s", quoted(text)).containsExactly(ids(hf, text));
        }
    }

    @Test
    void specialTokensInTextAreSingleTokens() {
        int imStart = TinyModel.VOCAB_SIZE - 2;
        int[] ids = model.encode("<|im_start|>user");
        assertThat(ids[0]).isEqualTo(imStart);
        assertThat(ids).hasSizeGreaterThan(1).doesNotContain(TinyModel.VOCAB_SIZE - 1);
    }

    /** A check that cannot fail proves nothing: a tokenizer.json with another pre-tokenizer must disagree. */
    @Test
    void theTextsTellPreTokenizersApart() throws IOException {
        BpeVocabulary qwen2 = withPre(TinyModel.vocabulary(8192), "qwen2");
        Path other = TokenizerFiles.write(qwen2, dir.resolve("other-pre")).tokenizerJson();
        try (HuggingFaceTokenizer wrong = tokenizer(other)) {
            List<String> differing = new ArrayList<>();
            for (String text : TEXTS) {
                if (!Arrays.equals(model.encode(text), ids(wrong, text))) {
                    differing.add(text);
                }
            }
            assertThat(differing).isNotEmpty();
        }
    }

    /**
     * A GGUF a user brings, with another pre-tokenizer: the tiny model rewritten (reader → writer) with
     * {@code tokenizer.ggml.pre} replaced, its tokenizer files made from the GGUF alone.
     */
    @ParameterizedTest
    @ValueSource(strings = {"qwen2", "llama-bpe"})
    void tokenizerFilesFromAGgufMatchLlamaCpp(String pre) throws IOException {
        Path variant = dir.resolve("pre-" + pre);
        Files.createDirectories(variant);
        Path gguf = variant.resolve("model.gguf");
        rewrite(tiny.gguf(), gguf, "tokenizer.ggml.pre", GgufValue.string(pre));
        TokenizerFiles.Written files = TokenizerFiles.write(gguf, variant);

        LlamaModel other = load(gguf);
        try (HuggingFaceTokenizer otherHf = tokenizer(files.tokenizerJson())) {
            for (String text : TEXTS) {
                assertThat(other.encode(text)).as("%s: token ids of %s", pre, quoted(text))
                        .containsExactly(ids(otherHf, text));
            }
        } finally {
            other.close();
        }
    }

    @Test
    void greedyGenerationRunsAndRepeats() {
        String prompt = "<|im_start|>user\nWhere is the fleet?<|im_end|>\n<|im_start|>assistant\n";
        InferenceParameters greedy = new InferenceParameters(prompt).setTemperature(0f).setNPredict(8)
                .setIgnoreEos(true).setCachePrompt(false);
        List<String> pieces = new ArrayList<>();
        for (LlamaOutput out : model.generate(greedy)) {
            pieces.add(out.text);
        }
        String once = model.complete(greedy);
        String again = model.complete(greedy);

        assertThat(pieces).as("one result per token, then the stream's final (empty) result").hasSize(9);
        assertThat(pieces.get(8)).isEmpty();
        assertThat(again).isEqualTo(once);
        // The tiny model writes whole UTF-8 text (TinyModel.textual): no token is held back, nothing is U+FFFD.
        assertThat(once).isEqualTo(String.join("", pieces)).doesNotContain("\uFFFD");
    }

    private static LlamaModel load(Path gguf) {
        return new LlamaModel(new ModelParameters().setModel(gguf.toString()).setCtxSize(2048).setThreads(2).disableLog()
                .setParallel(1));
    }

    private static HuggingFaceTokenizer tokenizer(Path tokenizerJson) throws IOException {
        return HuggingFaceTokenizer.newInstance(tokenizerJson,
                Map.of("addSpecialTokens", "false", "truncation", "false", "padding", "false"));
    }

    private static int[] ids(HuggingFaceTokenizer tokenizer, String text) {
        return Arrays.stream(tokenizer.encode(text, false, false).getIds()).mapToInt(Math::toIntExact).toArray();
    }

    private static BpeVocabulary withPre(BpeVocabulary v, String pre) {
        return new BpeVocabulary(v.name(), pre, v.tokens(), v.types(), v.merges(), v.bosId(), v.eosId(), v.padId(),
                v.addBos(), v.chatTemplate(), v.contextLength());
    }

    /** Copies a GGUF (f32 tensors) with one metadata key replaced. */
    private static void rewrite(Path from, Path to, String key, GgufValue value) throws IOException {
        GgufFile gguf = GgufReader.read(from);
        GgufWriter writer = new GgufWriter();
        gguf.metadata().forEach(writer::put);
        writer.put(key, value);
        for (GgufTensorInfo t : gguf.tensors()) {
            writer.addF32(t.name(), t.dims().stream().mapToLong(Long::longValue).toArray(),
                    GgufReader.readF32(from, gguf, t));
        }
        writer.write(to);
    }

    private static String quoted(String text) {
        return "\"" + text.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + "\"";
    }
}
