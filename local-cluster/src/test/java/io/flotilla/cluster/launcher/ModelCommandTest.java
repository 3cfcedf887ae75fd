package io.flotilla.cluster.launcher;

import io.flotilla.gguf.TinyModel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code bin/flotilla model tiny}. */
class ModelCommandTest {

    @TempDir
    Path caller;

    @Test
    void tinyWritesTheModelIntoARelativeOutUnderTheCallersDirectory() throws IOException {
        ModelCommand.Tiny tiny = new ModelCommand.Tiny();
        new CommandLine(tiny).parseArgs("--out", "models/tiny", "--seed", "5");

        TinyModel.Written written = tiny.write(caller);

        assertThat(written.dir()).isEqualTo(caller.resolve("models/tiny"));
        assertThat(written.gguf()).isRegularFile().hasFileName(TinyModel.GGUF);
        assertThat(written.tokenizerJson()).isRegularFile();
        assertThat(written.tokenizerConfig()).isRegularFile();
        assertThat(Files.readString(written.tokenizerConfig())).contains("chat_template");
    }

    @Test
    void theCommandIsRegisteredAndOutIsRequired() {
        CommandLine cli = new CommandLine(new FlotillaCli());
        assertThat(cli.getSubcommands()).containsKey("model");
        assertThat(cli.getSubcommands().get("model").getSubcommands()).containsKey("tiny");
        java.io.StringWriter err = new java.io.StringWriter();
        cli.setErr(new java.io.PrintWriter(err));
        assertThat(cli.execute("model", "tiny")).isEqualTo(2);
        assertThat(err.toString()).contains("Missing required option: '--out=DIR'");
        ModelCommand.Tiny parsed = new ModelCommand.Tiny();
        new CommandLine(parsed).parseArgs("--out", "/abs/dir");
        assertThat(parsed.seed).isZero();
    }
}
