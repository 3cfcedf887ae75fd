package io.flotilla.worker.engine.llamacpp;

import java.nio.file.Path;
import java.util.Objects;

/**
 * One in-process llama.cpp engine.
 *
 * @param gguf           the model file
 * @param slots          parallel sequences (llama.cpp's {@code --parallel}): requests decoded together by continuous
 *                       batching, each on its own slot with its own prompt cache
 * @param threads        CPU threads for prompt and generation
 * @param contextPerSlot tokens one slot holds (prompt plus output); the engine's context is this times {@code slots}
 * @param maxWaiting     requests queued for a slot before the engine answers overloaded
 * @param nativeDir      private folder the binding unpacks its native library into
 */
public record LlamaCppSettings(Path gguf, int slots, int threads, int contextPerSlot, int maxWaiting, Path nativeDir) {

    public LlamaCppSettings {
        Objects.requireNonNull(gguf, "gguf");
        Objects.requireNonNull(nativeDir, "nativeDir");
        if (slots < 1 || threads < 1 || contextPerSlot < 16 || maxWaiting < 0) {
            throw new IllegalArgumentException("llama-cpp needs slots >= 1, threads >= 1, context-per-slot >= 16 and "
                    + "max-waiting >= 0, got " + slots + ", " + threads + ", " + contextPerSlot + ", " + maxWaiting);
        }
    }
}
