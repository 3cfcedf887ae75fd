package io.flotilla.worker.engine.openai;

import java.util.Map;
import java.util.Objects;

/**
 * LoRA adapters of an external vLLM engine ({@code flotilla.worker.lora.*}).
 *
 * @param paths     adapters the worker may load on demand, name → {@code lora_path} for
 *                  {@code POST /v1/load_lora_adapter} (adapters the engine already serves are discovered
 *                  from {@code GET /v1/models} and need none)
 * @param maxLoaded adapters the worker keeps loaded through the API at once (keep it at most the engine's
 *                  {@code --max-cpu-loras}); loading one more unloads the least recently used idle one
 * @param loadMs    the load time advertised until loads were measured
 */
public record LoraSettings(Map<String, String> paths, int maxLoaded, double loadMs) {

    public static final LoraSettings NONE = new LoraSettings(Map.of(), 4, 500);

    public LoraSettings {
        paths = Map.copyOf(Objects.requireNonNullElse(paths, Map.of()));
        if (maxLoaded < 1) {
            throw new IllegalArgumentException("max loaded adapters must be at least 1, got " + maxLoaded);
        }
        if (!(loadMs >= 0) || Double.isInfinite(loadMs)) {
            throw new IllegalArgumentException("adapter load time must be finite and >= 0, got " + loadMs);
        }
    }
}
