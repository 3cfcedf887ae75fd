package io.flotilla.gguf;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Writes a GGUF v3 file: header, metadata in insertion order with the exact types given, tensor infos,
 * and f32 tensor data, each tensor starting at a multiple of the alignment ({@code general.alignment}
 * when put, else 32). The output depends only on what was put, so equal inputs give byte-identical files.
 *
 * <p>Hand-written for the reason {@link GgufReader} gives. Holds the tensors in memory until
 * {@link #write}; meant for small models (the tiny model is about 15 MB).
 */
public final class GgufWriter {

    private record Tensor(String name, long[] dims, float[] data) {
    }

    private final Map<String, GgufValue> metadata = new LinkedHashMap<>();
    private final List<Tensor> tensors = new ArrayList<>();

    /** Adds or replaces a metadata key (a replaced key keeps its first position). */
    public GgufWriter put(String key, GgufValue value) {
        metadata.put(Objects.requireNonNull(key, "key"), Objects.requireNonNull(value, "value"));
        return this;
    }

    /**
     * Adds an f32 tensor.
     *
     * @param dims ggml's order, fastest-varying first: a {@code [rows][cols]} matrix is {@code {cols, rows}}
     */
    public GgufWriter addF32(String name, long[] dims, float[] data) {
        long n = 1;
        for (long d : dims) {
            if (d <= 0) {
                throw new IllegalArgumentException(name + ": dimension " + d);
            }
            n = Math.multiplyExact(n, d);
        }
        if (n != data.length) {
            throw new IllegalArgumentException(name + ": " + data.length + " values for " + n + " elements");
        }
        if (tensors.stream().anyMatch(t -> t.name.equals(name))) {
            throw new IllegalArgumentException("tensor " + name + " added twice");
        }
        tensors.add(new Tensor(name, dims.clone(), data));
        return this;
    }

    /** Writes the file (through a sibling temporary file, so a reader never sees half of it). */
    public void write(Path file) throws IOException {
        int alignment = alignment();
        Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
        try (Out out = new Out(new BufferedOutputStream(Files.newOutputStream(tmp), 1 << 16))) {
            out.u32(GgufReader.MAGIC);
            out.u32(3);
            out.u64(tensors.size());
            out.u64(metadata.size());
            for (Map.Entry<String, GgufValue> kv : metadata.entrySet()) {
                out.string(kv.getKey());
                out.u32(kv.getValue().type().code());
                value(out, kv.getValue());
            }
            long offset = 0;
            for (Tensor t : tensors) {
                out.string(t.name);
                out.u32(t.dims.length);
                for (long d : t.dims) {
                    out.u64(d);
                }
                out.u32(GgufTensorInfo.F32);
                out.u64(offset);
                offset = align(offset + 4L * t.data.length, alignment);
            }
            out.pad(alignment);
            ByteBuffer chunk = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
            for (Tensor t : tensors) {
                for (float f : t.data) {
                    if (!chunk.hasRemaining()) {
                        out.write(chunk);
                    }
                    chunk.putFloat(f);
                }
                out.write(chunk);
                out.pad(alignment);
            }
        }
        Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private int alignment() {
        GgufValue v = metadata.get("general.alignment");
        if (v == null) {
            return GgufReader.DEFAULT_ALIGNMENT;
        }
        if (v.type() != GgufType.UINT32 || Long.bitCount(v.asLong()) != 1) {
            throw new IllegalArgumentException("general.alignment must be a uint32 power of two: " + v);
        }
        return (int) v.asLong();
    }

    private static long align(long n, int alignment) {
        return (n + alignment - 1) / alignment * alignment;
    }

    private static void value(Out out, GgufValue v) throws IOException {
        if (v.type() == GgufType.ARRAY) {
            out.u32(v.elementType().code());
            List<?> items = v.asList();
            out.u64(items.size());
            for (Object item : items) {
                if (v.elementType() == GgufType.ARRAY) {
                    value(out, (GgufValue) item);
                } else {
                    scalar(out, v.elementType(), item);
                }
            }
        } else {
            scalar(out, v.type(), v.value());
        }
    }

    private static void scalar(Out out, GgufType type, Object value) throws IOException {
        switch (type) {
            case UINT8, INT8 -> out.raw(1, (Long) value);
            case UINT16, INT16 -> out.raw(2, (Long) value);
            case UINT32, INT32 -> out.raw(4, (Long) value);
            case UINT64, INT64 -> out.u64((Long) value);
            case FLOAT32 -> out.raw(4, Float.floatToRawIntBits((Float) value));
            case FLOAT64 -> out.u64(Double.doubleToRawLongBits((Double) value));
            case BOOL -> out.raw(1, (Boolean) value ? 1 : 0);
            case STRING -> out.string((String) value);
            case ARRAY -> throw new IllegalStateException("arrays are written by value()");
        }
    }

    /** Little-endian output that counts its position (for padding). */
    private static final class Out implements AutoCloseable {
        private final OutputStream out;
        private long position;

        Out(OutputStream out) {
            this.out = out;
        }

        void raw(int bytes, long v) throws IOException {
            for (int i = 0; i < bytes; i++) {
                out.write((int) (v >>> (8 * i)) & 0xFF);
            }
            position += bytes;
        }

        void u32(long v) throws IOException {
            raw(4, v);
        }

        void u64(long v) throws IOException {
            raw(8, v);
        }

        void string(String s) throws IOException {
            byte[] utf8 = s.getBytes(StandardCharsets.UTF_8);
            u64(utf8.length);
            out.write(utf8);
            position += utf8.length;
        }

        void write(ByteBuffer chunk) throws IOException {
            out.write(chunk.array(), 0, chunk.position());
            position += chunk.position();
            chunk.clear();
        }

        void pad(int alignment) throws IOException {
            while (position % alignment != 0) {
                out.write(0);
                position++;
            }
        }

        @Override
        public void close() throws IOException {
            out.close();
        }
    }
}
