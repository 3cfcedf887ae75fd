package io.flotilla.cluster.launcher;

import io.flotilla.gguf.TinyModel;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** `up --engine llama-cpp`: the model prepared once, the workers' arguments, and the record start-worker reads. */
class LlamaEngineTest {

    @Test
    void withoutAGgufTheTinyModelIsGeneratedOnceAndServedWithItsTokenizer() throws Exception {
        Path state = Files.createTempDirectory("llama-state-");
        LlamaEngine.Prepared first = LlamaEngine.prepare(null, null, 2, 1, 4096, state, state);
        Path gguf = state.resolve("models/tiny/model.gguf");
        assertThat(first.engine().gguf()).isEqualTo(gguf);
        assertThat(first.modelDir()).isEqualTo(state.resolve("models/tiny").toString());
        assertThat(state.resolve("models/tiny/tokenizer.json")).isRegularFile();
        long written = Files.getLastModifiedTime(gguf).toMillis();
        LlamaEngine.prepare(null, null, 2, 1, 4096, state, state);
        assertThat(Files.getLastModifiedTime(gguf).toMillis()).as("generated once").isEqualTo(written);
        assertThat(first.engine().workerArgs()).contains("--flotilla.worker.engine=llama-cpp",
                "--flotilla.worker.llama.gguf=" + gguf, "--flotilla.worker.llama.slots=2",
                "--flotilla.worker.llama.threads=1", "--flotilla.worker.llama.context-per-slot=4096");
    }

    @Test
    void aGgufWithoutATokenizerDirectoryGetsOneWrittenFromItsMetadata() throws Exception {
        Path dir = Files.createTempDirectory("llama-user-");
        Path file = TinyModel.write(dir.resolve("src"), 3).gguf();
        Path mine = Files.copy(file, dir.resolve("mine.gguf"));
        Path state = dir.resolve("state");
        LlamaEngine.Prepared p = LlamaEngine.prepare("mine.gguf", null, 4, 2, 2048, dir, state);
        assertThat(p.modelDir()).isEqualTo(state.resolve("models/mine").toString());
        assertThat(state.resolve("models/mine/tokenizer.json")).isRegularFile();
        assertThat(p.engine().gguf()).isEqualTo(mine);
        assertThatThrownBy(() -> LlamaEngine.prepare("missing.gguf", null, 4, 2, 2048, dir, state))
                .isInstanceOf(LauncherException.class).hasMessageContaining("--gguf");
    }

    @Test
    void theEngineIsRecordedSoStartWorkerStartsItAlike() throws Exception {
        ClusterState state = ClusterState.load(Files.createTempDirectory("llama-record-"));
        ExternalEngines engines = ExternalEngines.inProcess(new LlamaEngine(Path.of("/m/x.gguf"), 3, 2, 1024));
        engines.save(state);
        ExternalEngines loaded = ExternalEngines.load(state);
        assertThat(loaded.llama()).isEqualTo(engines.llama());
        assertThat(loaded.real()).isTrue();
        assertThat(loaded.external()).isFalse();
        assertThat(loaded.workerArgs(5)).isEqualTo(engines.workerArgs(0));
    }
}
