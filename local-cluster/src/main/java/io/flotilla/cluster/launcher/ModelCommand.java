package io.flotilla.cluster.launcher;

import io.flotilla.gguf.TinyModel;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

/**
 * {@code bin/flotilla model}: models made here. {@code model tiny --out DIR [--seed N]} writes the seeded
 * tiny llama model ({@code model.gguf}, {@code tokenizer.json}, {@code tokenizer_config.json} with its
 * chat template) that llama.cpp runs and the gateway tokenizes identically; see the gguf module.
 */
@Command(name = "model", description = "Make a model: 'model tiny' writes a seeded tiny llama GGUF with its tokenizer.",
        mixinStandardHelpOptions = true, subcommands = ModelCommand.Tiny.class)
final class ModelCommand implements Runnable {

    @picocli.CommandLine.Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        throw new picocli.CommandLine.ParameterException(spec.commandLine(), "Missing required subcommand (tiny)");
    }

    @Command(name = "tiny", mixinStandardHelpOptions = true,
            description = "Write a llama GGUF with seeded random weights (4 layers, 256 wide, context 8192, a byte-level BPE"
                    + " vocabulary of 1024 tokens; 16 MB) and its tokenizer.json and tokenizer_config.json (ChatML"
                    + " template) into DIR.")
    static final class Tiny implements Callable<Integer> {

        @Option(names = "--out", required = true, paramLabel = "DIR",
                description = "Directory to write into (created if missing; the three files are replaced).")
        Path out;
        @Option(names = "--seed", defaultValue = "0", paramLabel = "N",
                description = "Seed of the weights (default ${DEFAULT-VALUE}); the same seed gives byte-identical files.")
        long seed;

        @Override
        public Integer call() {
            TinyModel.Written written = write(FlotillaCli.workingDir());
            try {
                System.out.printf("wrote %s: %s (%.1f MB, seed %d), %s, %s%n", written.dir(),
                        written.gguf().getFileName(), Files.size(written.gguf()) / 1e6, seed,
                        written.tokenizerJson().getFileName(), written.tokenizerConfig().getFileName());
            } catch (IOException e) {
                throw new LauncherException("cannot read back " + written.gguf() + ": " + e.getMessage());
            }
            return 0;
        }

        /** Writes the model, a relative {@code --out} resolved against {@code base} (where bin/flotilla was run). */
        TinyModel.Written write(Path base) {
            Path dir = base.resolve(out).toAbsolutePath().normalize();
            try {
                return TinyModel.write(dir, seed);
            } catch (IOException e) {
                throw new LauncherException("cannot write the tiny model into " + dir + ": " + e.getMessage());
            }
        }
    }
}
