package io.flotilla.gateway.tokenize;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Start-up resolution of every model's tokenization: built-ins, model directories, and the failures. */
class ModelTokenizationsTest {

    private static final Cl100kTokenizer CL100K = new Cl100kTokenizer();
    private static final ChatMlTemplate CHATML = new ChatMlTemplate();

    @TempDir
    Path tmp;

    private static ModelTokenizations of(Map<String, ModelTokenizations.Spec> models) {
        return new ModelTokenizations(models, Map.of(Cl100kTokenizer.ID, CL100K), Map.of(ChatMlTemplate.ID, CHATML),
                JinjaChatTemplateTest.JULY_26);
    }

    @Test
    void builtInsByDefaultAndModelDirectoriesWhenConfigured() {
        Path qwen = TinyTokenizers.modelDir(tmp.resolve("qwen"), "/models/qwen2.5-7b-instruct");
        ModelTokenizations t = of(Map.of(
                "sim", new ModelTokenizations.Spec("cl100k_base", "chatml", null),
                "qwen", new ModelTokenizations.Spec(null, null, qwen),
                "qwen-chatml", new ModelTokenizations.Spec("qwen-id", "chatml", qwen)));
        try {
            assertThat(t.of("unconfigured").tokenizer()).isSameAs(CL100K);
            assertThat(t.of("unconfigured").template()).isSameAs(CHATML);
            assertThat(t.of("sim").tokenizer()).isSameAs(CL100K);
            assertThat(t.of("qwen").tokenizer()).isInstanceOf(HfTokenizer.class);
            assertThat(t.of("qwen").tokenizer().id()).isEqualTo("qwen");
            assertThat(t.of("qwen").template()).isInstanceOf(JinjaChatTemplate.class);
            assertThat(t.of("qwen-chatml").tokenizer().id()).isEqualTo("qwen-id");
            assertThat(t.of("qwen-chatml").template()).isSameAs(CHATML);
        } finally {
            t.close();
        }
        Tokenizer closed = t.of("qwen").tokenizer();
        assertThatThrownBy(() -> closed.encode("hi"))
                .as("closed: the native tokenizer is freed").isInstanceOf(IllegalStateException.class);
    }

    @Test
    void badConfigurationNamesTheModel() {
        assertThatThrownBy(() -> of(Map.of("m", new ModelTokenizations.Spec("o200k_base", null, null))))
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("model 'm': unknown tokenizer 'o200k_base' (built in: [cl100k_base]; a HuggingFace model needs model-dir)");
        assertThatThrownBy(() -> of(Map.of("m", new ModelTokenizations.Spec(null, "llama3", null))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("model 'm': unknown chat template 'llama3'");
        assertThatThrownBy(() -> of(Map.of("m", new ModelTokenizations.Spec(null, null, tmp.resolve("missing")))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("model 'm': model-dir")
                .hasMessageContaining("is not a directory");
    }

    @Test
    void anUnconfiguredModelTakesItsWorkersTokenizerOrIsAnExplicitError() {
        Path dir = TinyTokenizers.modelDir(tmp.resolve("qwen"), "/models/qwen2.5-7b-instruct");
        try (ModelTokenizations t = of(Map.of())) {
            assertThat(t.reconcile("flotilla-sim", "cl100k_base", "builtin:cl100k_base")).isEmpty();
            assertThat(t.of("flotilla-sim").tokenizer().id()).as("cl100k for the simulated model").isEqualTo("cl100k_base");

            assertThat(t.reconcile("qwen", "Qwen/Qwen2.5-7B-Instruct", dir.toString())).isEmpty();
            assertThat(t.of("qwen").tokenizer().id()).as("loaded from the directory the workers registered")
                    .isEqualTo("Qwen/Qwen2.5-7B-Instruct");

            assertThat(t.reconcile("llama", "meta-llama/Llama-3.1-8B-Instruct", "meta-llama/Llama-3.1-8B-Instruct"))
                    .hasValueSatisfying(p -> assertThat(p).contains("meta-llama/Llama-3.1-8B-Instruct")
                            .contains("flotilla.gateway.models.llama.model-dir"));
            assertThatThrownBy(() -> t.of("llama")).as("never tokenized with cl100k instead")
                    .isInstanceOf(IllegalStateException.class).hasMessageContaining("llama");
        }
    }

    @Test
    void aConfiguredTokenizerThatIsNotTheWorkersIsAMismatch() {
        try (ModelTokenizations t = of(Map.of("sim", new ModelTokenizations.Spec("cl100k_base", "chatml", null)))) {
            assertThat(t.reconcile("sim", "cl100k_base", "builtin:cl100k_base")).isEmpty();
            assertThat(t.reconcile("sim", "meta-llama/Llama-3.1-8B-Instruct", "/models/llama"))
                    .hasValueSatisfying(p -> assertThat(p).contains("'cl100k_base'").contains("meta-llama/Llama-3.1-8B-Instruct"));
        }
    }
}
