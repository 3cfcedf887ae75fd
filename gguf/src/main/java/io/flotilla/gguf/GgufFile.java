package io.flotilla.gguf;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What {@link GgufReader} reads from a GGUF file: everything but the tensor data.
 *
 * @param version    the format version (2 or 3; both have this layout)
 * @param metadata   keys in file order
 * @param tensors    in file order
 * @param alignment  of the data section and of each tensor in it ({@code general.alignment}, default 32)
 * @param dataOffset the data section's offset from the start of the file
 */
public record GgufFile(int version, Map<String, GgufValue> metadata, List<GgufTensorInfo> tensors, int alignment,
                       long dataOffset) {

    public GgufFile {
        metadata = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(metadata));
        tensors = List.copyOf(tensors);
    }

    public Optional<GgufValue> get(String key) {
        return Optional.ofNullable(metadata.get(key));
    }

    /** The value of a key that must be there. */
    public GgufValue require(String key) {
        GgufValue v = metadata.get(key);
        if (v == null) {
            throw new IllegalArgumentException("GGUF metadata has no " + key);
        }
        return v;
    }

    public Optional<String> string(String key) {
        return get(key).map(GgufValue::asString);
    }

    public Optional<Long> integer(String key) {
        return get(key).map(GgufValue::asLong);
    }

    public Optional<Boolean> bool(String key) {
        return get(key).map(GgufValue::asBoolean);
    }

    /** {@code general.architecture}, e.g. {@code llama} or {@code qwen2}. */
    public String architecture() {
        return require("general.architecture").asString();
    }

    /** {@code <architecture>.context_length}: the context the model was trained for. */
    public Optional<Long> contextLength() {
        return integer(architecture() + ".context_length");
    }

    public Optional<GgufTensorInfo> tensor(String name) {
        return tensors.stream().filter(t -> t.name().equals(name)).findFirst();
    }
}
