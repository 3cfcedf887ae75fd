package io.flotilla.gguf;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TinyModelTest {

    @TempDir
    Path dir;

    @Test
    void theSameSeedGivesByteIdenticalFiles() throws IOException {
        TinyModel.Written a = TinyModel.write(dir.resolve("a"), 7);
        TinyModel.Written b = TinyModel.write(dir.resolve("b"), 7);
        TinyModel.Written c = TinyModel.write(dir.resolve("c"), 8);

        assertThat(Files.mismatch(a.gguf(), b.gguf())).isEqualTo(-1);
        assertThat(Files.mismatch(a.tokenizerJson(), b.tokenizerJson())).isEqualTo(-1);
        assertThat(Files.mismatch(a.tokenizerConfig(), b.tokenizerConfig())).isEqualTo(-1);
        assertThat(Files.mismatch(a.gguf(), c.gguf())).isNotEqualTo(-1);
        assertThat(Files.mismatch(a.tokenizerJson(), c.tokenizerJson())).as("the vocabulary does not depend on the seed")
                .isEqualTo(-1);
    }

    @Test
    void theGgufCarriesALlamaModelAndItsVocabulary() throws IOException {
        TinyModel.Written model = TinyModel.write(dir, 1);

        GgufFile gguf = GgufReader.read(model.gguf());

        assertThat(gguf.architecture()).isEqualTo("llama");
        assertThat(gguf.contextLength()).contains(8192L);
        assertThat(gguf.require("llama.context_length").type()).isEqualTo(GgufType.UINT32);
        assertThat(gguf.require("llama.attention.layer_norm_rms_epsilon").type()).isEqualTo(GgufType.FLOAT32);
        List<String> tokens = gguf.require("tokenizer.ggml.tokens").asStrings();
        assertThat(tokens).hasSize(TinyModel.VOCAB_SIZE).doesNotHaveDuplicates();
        assertThat(tokens.subList(TinyModel.VOCAB_SIZE - 3, TinyModel.VOCAB_SIZE))
                .containsExactly(TinyModel.END_OF_TEXT, TinyModel.IM_START, TinyModel.IM_END);
        assertThat(gguf.require("tokenizer.ggml.merges").asStrings()).hasSize(TinyModel.VOCAB_SIZE - 256 - 3);
        assertThat(gguf.require("tokenizer.ggml.token_type").asInts()).containsOnly(1, 3);
        assertThat(gguf.string("tokenizer.ggml.model")).contains("gpt2");
        assertThat(gguf.string("tokenizer.ggml.pre")).contains("gpt-2");
        assertThat(gguf.bool("tokenizer.ggml.add_bos_token")).contains(false);
        assertThat(gguf.integer("tokenizer.ggml.eos_token_id")).contains((long) tokens.indexOf(TinyModel.IM_END));
        assertThat(gguf.string("tokenizer.chat_template")).contains(TinyModel.CHAT_TEMPLATE);
        assertThat(gguf.tensors()).hasSize(3 + 9 * 4);
        assertThat(Files.size(model.gguf())).isBetween(14_000_000L, 17_000_000L);
    }

    @Test
    void everyMergeMakesANewTokenOfTwoExistingOnes() {
        BpeVocabulary vocab = TinyModel.vocabulary(8192);
        var known = new HashSet<>(vocab.tokens().subList(0, 256));
        for (int i = 0; i < vocab.merges().size(); i++) {
            String[] pair = vocab.merges().get(i).split(" ");
            assertThat(pair).hasSize(2);
            assertThat(known).contains(pair[0], pair[1]);
            assertThat(known.add(pair[0] + pair[1])).isTrue();
            assertThat(vocab.tokens().get(256 + i)).isEqualTo(pair[0] + pair[1]);
        }
    }

    @Test
    void tokenizerConfigHasTheChatTemplateAndSpecialTokens() throws IOException {
        TinyModel.Written model = TinyModel.write(dir, 1);

        JsonNode config = new ObjectMapper().readTree(model.tokenizerConfig().toFile());
        JsonNode tokenizer = new ObjectMapper().readTree(model.tokenizerJson().toFile());

        assertThat(config.path("chat_template").asText()).isEqualTo(TinyModel.CHAT_TEMPLATE);
        assertThat(config.path("eos_token").asText()).isEqualTo(TinyModel.IM_END);
        assertThat(config.path("add_bos_token").asBoolean(true)).isFalse();
        assertThat(config.path("name_or_path").asText()).isEqualTo(TinyModel.TOKENIZER_NAME);
        assertThat(tokenizer.path("model").path("type").asText()).isEqualTo("BPE");
        assertThat(tokenizer.path("model").path("vocab").size()).isEqualTo(TinyModel.VOCAB_SIZE);
        assertThat(tokenizer.path("added_tokens").findValuesAsText("content"))
                .containsExactly(TinyModel.END_OF_TEXT, TinyModel.IM_START, TinyModel.IM_END);
    }

    @Test
    void tokenizerFilesFromTheGgufEqualTheOnesWrittenWithIt() throws IOException {
        TinyModel.Written model = TinyModel.write(dir.resolve("model"), 3);
        GgufFile gguf = GgufReader.read(model.gguf());

        TokenizerFiles.Written fromGguf = TokenizerFiles.write(
                TokenizerFiles.vocabulary(gguf, TinyModel.TOKENIZER_NAME), dir.resolve("from-gguf"));

        assertThat(Files.mismatch(fromGguf.tokenizerJson(), model.tokenizerJson())).isEqualTo(-1);
        assertThat(Files.mismatch(fromGguf.tokenizerConfig(), model.tokenizerConfig())).isEqualTo(-1);
    }

    @Test
    void aSentencePieceVocabularyIsRefusedInOneLine() throws IOException {
        Path file = dir.resolve("spm.gguf");
        new GgufWriter().put("general.architecture", GgufValue.string("llama"))
                .put("tokenizer.ggml.model", GgufValue.string("llama"))
                .put("tokenizer.ggml.tokens", GgufValue.strings(List.of("<unk>", "<s>", "</s>"))).write(file);

        assertThatThrownBy(() -> TokenizerFiles.write(file, dir.resolve("out")))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("spm.gguf").hasMessageContaining("SentencePiece")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain("\n"));
    }

    @Test
    void anUnknownPreTokenizerIsRefusedByName() throws IOException {
        Path file = dir.resolve("other.gguf");
        new GgufWriter().put("general.architecture", GgufValue.string("llama"))
                .put("tokenizer.ggml.model", GgufValue.string("gpt2"))
                .put("tokenizer.ggml.pre", GgufValue.string("deepseek-coder"))
                .put("tokenizer.ggml.tokens", GgufValue.strings(List.of("a")))
                .put("tokenizer.ggml.merges", GgufValue.strings(List.of()))
                .write(file);

        assertThatThrownBy(() -> TokenizerFiles.write(file, dir.resolve("out")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("'deepseek-coder'");
    }
}
