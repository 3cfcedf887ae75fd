package io.flotilla.cluster.launcher;

import io.flotilla.gguf.TinyModel;
import io.flotilla.gguf.TokenizerFiles;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The workers' in-process llama.cpp engine ({@code bin/flotilla up --engine llama-cpp [--gguf FILE] [--slots S]
 * [--engine-threads T] [--context-per-slot C]}): every worker loads the GGUF and runs it on this machine's CPUs.
 * Without {@code --gguf} the tiny model ({@code bin/flotilla model tiny}) is generated once under
 * {@code <state dir>/models/tiny}; a GGUF without a tokenizer directory gets its {@code tokenizer.json} written from its
 * metadata, so the gateway tokenizes exactly as the engine does.
 *
 * @param gguf           absolute model file
 * @param slots          parallel sequences per worker
 * @param threads        CPU threads per worker's engine
 * @param contextPerSlot tokens per slot
 */
public record LlamaEngine(Path gguf, int slots, int threads, int contextPerSlot) {

    /** The workers' own defaults (flotilla.worker.llama.*), for flags not given and states recorded without them. */
    static final int DEFAULT_SLOTS = 2;
    static final int DEFAULT_THREADS = 1;
    static final int DEFAULT_CONTEXT_PER_SLOT = 4096;

    /** The tiny model's seed: the same model on every machine. */
    static final long TINY_SEED = 7;

    public LlamaEngine {
        if (slots < 1 || threads < 1 || contextPerSlot < 16) {
            throw new LauncherException("--slots and --engine-threads must be at least 1 and --context-per-slot at least 16");
        }
    }

    /**
     * The model to serve: {@code gguf} (relative to {@code workingDir}), or the tiny model generated under
     * {@code stateDir}; and the tokenizer directory the gateway reads, {@code modelDir} or one written from the GGUF.
     *
     * @return the engine and the model directory for the gateway
     */
    static Prepared prepare(String gguf, String modelDir, int slots, int threads, int contextPerSlot, Path workingDir,
                            Path stateDir) {
        try {
            if (gguf == null) {
                Path dir = stateDir.resolve("models").resolve("tiny");
                if (!Files.isRegularFile(dir.resolve(TinyModel.GGUF))) {
                    TinyModel.write(dir, TINY_SEED);
                }
                return new Prepared(new LlamaEngine(dir.resolve(TinyModel.GGUF), slots, threads, contextPerSlot),
                        modelDir != null ? modelDir : dir.toString());
            }
            Path file = workingDir.resolve(gguf).toAbsolutePath().normalize();
            if (!Files.isRegularFile(file)) {
                throw new LauncherException("--gguf " + file + " is not a file");
            }
            if (modelDir != null) {
                return new Prepared(new LlamaEngine(file, slots, threads, contextPerSlot), modelDir);
            }
            Path dir = stateDir.resolve("models").resolve(nameOf(file));
            TokenizerFiles.write(file, dir);
            return new Prepared(new LlamaEngine(file, slots, threads, contextPerSlot), dir.toString());
        } catch (IOException e) {
            throw new LauncherException("cannot prepare the llama-cpp model: " + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new LauncherException(e.getMessage() + " (or give the model's own tokenizer with --model-dir DIR)");
        }
    }

    /** The model's name from its file: {@code qwen.gguf} is {@code qwen}. */
    static String nameOf(Path gguf) {
        return gguf.getFileName().toString().replaceFirst("\\.gguf$", "");
    }

    /** The engine and the directory the gateway tokenizes with. */
    record Prepared(LlamaEngine engine, String modelDir) {
    }

    List<String> workerArgs() {
        return List.of("--flotilla.worker.engine=llama-cpp", "--flotilla.worker.llama.gguf=" + gguf,
                "--flotilla.worker.llama.slots=" + slots, "--flotilla.worker.llama.threads=" + threads,
                "--flotilla.worker.llama.context-per-slot=" + contextPerSlot);
    }

    void save(ClusterState state) {
        state.setLayout("llama-gguf", gguf.toString());
        state.setLayout("llama-slots", Integer.toString(slots));
        state.setLayout("llama-threads", Integer.toString(threads));
        state.setLayout("llama-context-per-slot", Integer.toString(contextPerSlot));
    }

    static LlamaEngine load(ClusterState state) {
        return new LlamaEngine(Path.of(state.layout("llama-gguf", "")),
                Integer.parseInt(state.layout("llama-slots", Integer.toString(DEFAULT_SLOTS))),
                Integer.parseInt(state.layout("llama-threads", Integer.toString(DEFAULT_THREADS))),
                Integer.parseInt(state.layout("llama-context-per-slot", Integer.toString(DEFAULT_CONTEXT_PER_SLOT))));
    }
}
