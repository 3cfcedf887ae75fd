package io.flotilla.gateway.tokenize;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a model directory must hold, and the start-up errors when it does not. */
class HfModelDirectoryTest {

    private static final List<ChatMessage> HI = List.of(new ChatMessage("user", null, "Hi"));

    @TempDir
    Path tmp;

    private Path dir(String config) throws IOException {
        Path dir = Files.createDirectories(tmp.resolve("my-model"));
        Files.writeString(dir.resolve("tokenizer.json"), TinyTokenizers.byteLevel());
        if (config != null) {
            Files.writeString(dir.resolve("tokenizer_config.json"), config);
        }
        return dir;
    }

    private static ModelTokenization load(Path dir, String tokenizerId, ChatTemplate template) {
        return HfModelDirectory.load("m", dir, tokenizerId, template, JinjaChatTemplateTest.JULY_26);
    }

    private static void close(ModelTokenization t) {
        ((HfTokenizer) t.tokenizer()).close();
    }

    @Test
    void tokenizerIdIsConfiguredElseNameOrPathElseTheDirectorysName() throws IOException {
        String template = "{\"chat_template\": \"{{ messages[0].content }}\"";
        ModelTokenization configured = load(dir(template + "}"), "meta-llama/Llama-3.2-3B-Instruct", null);
        ModelTokenization named = load(dir(template + ", \"name_or_path\": \"org/named\"}"), null, null);
        ModelTokenization byDir = load(dir(template + "}"), null, null);
        try {
            assertThat(configured.tokenizer().id()).isEqualTo("meta-llama/Llama-3.2-3B-Instruct");
            assertThat(named.tokenizer().id()).isEqualTo("org/named");
            assertThat(byDir.tokenizer().id()).isEqualTo("my-model");
            assertThat(byDir.chatPrompt(HI)).containsExactly('H', 'i');
        } finally {
            close(configured);
            close(named);
            close(byDir);
        }
    }

    @Test
    void namedTemplatesUseDefault() throws IOException {
        ModelTokenization t = load(dir("{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"tools\"},"
                + " {\"name\": \"default\", \"template\": \"<{{ messages[0].content }}>\"}]}"), null, null);
        try {
            assertThat(t.template().render(HI)).isEqualTo("<Hi>");
        } finally {
            close(t);
        }
        assertThatThrownBy(() -> load(dir("{\"chat_template\": [{\"name\": \"tool_use\", \"template\": \"x\"}]}"), null, null))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has chat templates [tool_use] but none named 'default'");
    }

    @Test
    void chatTemplateJinjaWinsOverTokenizerConfig() throws IOException {
        Path dir = dir("{\"chat_template\": \"from config\"}");
        Files.writeString(dir.resolve("chat_template.jinja"), "from file: {{ messages[0].content }}");
        ModelTokenization t = load(dir, null, null);
        try {
            assertThat(t.template().render(HI)).isEqualTo("from file: Hi");
        } finally {
            close(t);
        }
    }

    @Test
    void aConfiguredBuiltInTemplateNeedsNoTemplateInTheDirectory() throws IOException {
        ModelTokenization t = load(dir(null), null, new ChatMlTemplate());
        try {
            assertThat(t.template().id()).isEqualTo("chatml");
            assertThat(t.chatPrompt(HI)).startsWith(t.tokenizer().encode("<|im_start|>user\nHi"));
        } finally {
            close(t);
        }
    }

    @Test
    void startupErrorsSayWhatIsWrong() throws IOException {
        assertThatThrownBy(() -> load(tmp.resolve("nowhere"), null, null))
                .hasMessageContaining("model 'm': model-dir").hasMessageContaining("nowhere is not a directory");

        Path empty = Files.createDirectories(tmp.resolve("empty"));
        assertThatThrownBy(() -> load(empty, null, null)).hasMessageContaining("has no tokenizer.json");

        assertThatThrownBy(() -> load(dir(null), null, null))
                .hasMessageContaining("has no chat template").hasMessageContaining("chat-template: chatml");

        assertThatThrownBy(() -> load(dir("{\"chat_template\": \"{% for m in messages %}{{ m.content }}\"}"), null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("does not parse");

        assertThatThrownBy(() -> load(dir("{\"chat_template\": \"{{ messages[::-1] }}\"}"), null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot render a single user message");

        assertThatThrownBy(() -> load(dir("{\"chat_template\": \"{{ raise_exception('no') }}\"}"), null, null))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("cannot render a single user message");

        assertThatThrownBy(() -> load(dir("{\"chat_template\": \"x\", \"bos_token\": 1}"), null, null))
                .hasMessageContaining("bos_token is neither a string nor an object with a content");

        assertThatThrownBy(() -> load(dir("[1, 2]"), null, null)).hasMessageContaining("is not a JSON object");

        Path broken = dir("{\"chat_template\": \"x\"}");
        Files.writeString(broken.resolve("tokenizer.json"), "{\"model\": {\"type\": \"BPE\"}}");
        assertThatThrownBy(() -> load(broken, null, null)).hasMessageStartingWith("model 'm': ");
    }
}
