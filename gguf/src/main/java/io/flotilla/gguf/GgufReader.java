package io.flotilla.gguf;

import java.io.BufferedInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads a little-endian GGUF file (versions 2 and 3): header, metadata and tensor infos, without the
 * tensor data, so a user's multi-gigabyte model costs the size of its vocabulary. {@link #readF32} reads
 * one f32 tensor's data when wanted.
 *
 * <p>Hand-written, as is {@link GgufWriter}: Maven Central has no maintained Java GGUF library (none in
 * the project's list of Maven artifacts matches "gguf"; the JVM bindings of llama.cpp load a GGUF but do
 * not expose its metadata), and the format is small: <a href="https://github.com/ggml-org/ggml/blob/master/docs/gguf.md">docs/gguf.md</a>.
 */
public final class GgufReader {

    static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
    static final int DEFAULT_ALIGNMENT = 32;

    private final InputStream in;
    private final long fileSize;
    private final ByteBuffer scratch = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN);
    private long position;

    private GgufReader(InputStream in, long fileSize) {
        this.in = in;
        this.fileSize = fileSize;
    }

    /**
     * @throws IllegalArgumentException when the file is not a GGUF this reader understands (bad magic,
     *                                  version 1, big-endian, truncated), naming the file
     */
    public static GgufFile read(Path file) throws IOException {
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            return new GgufReader(in, Files.size(file)).file();
        } catch (IllegalArgumentException | EOFException e) {
            throw new IllegalArgumentException(file + ": " + e.getMessage(), e);
        }
    }

    /** The data of an f32 tensor of {@code gguf} (read from {@code file}). */
    public static float[] readF32(Path file, GgufFile gguf, GgufTensorInfo tensor) throws IOException {
        if (tensor.ggmlType() != GgufTensorInfo.F32) {
            throw new IllegalArgumentException(tensor.name() + " is ggml type " + tensor.ggmlType() + ", not f32");
        }
        ByteBuffer bytes = ByteBuffer.allocate(Math.toIntExact(tensor.elements() * 4)).order(ByteOrder.LITTLE_ENDIAN);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            long at = gguf.dataOffset() + tensor.offset();
            while (bytes.hasRemaining()) {
                if (channel.read(bytes, at + bytes.position()) < 0) {
                    throw new EOFException(file + ": tensor " + tensor.name() + " runs past the end of the file");
                }
            }
        }
        float[] values = new float[bytes.capacity() / 4];
        bytes.flip().asFloatBuffer().get(values);
        return values;
    }

    private GgufFile file() throws IOException {
        int magic = (int) u32();
        if (magic != MAGIC) {
            throw new IllegalArgumentException("not a GGUF file (magic " + Integer.toHexString(magic) + ")");
        }
        long version = u32();
        if (version == 1) {
            throw new IllegalArgumentException("GGUF version 1 is not supported (convert it with a current llama.cpp)");
        }
        if (version != 2 && version != 3) {
            throw new IllegalArgumentException("GGUF version " + version + " is not supported"
                    + (Integer.reverseBytes((int) version) <= 3 ? " (a big-endian file?)" : ""));
        }
        long tensorCount = count(u64(), "tensor count");
        long kvCount = count(u64(), "metadata count");
        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        for (long i = 0; i < kvCount; i++) {
            String key = string();
            GgufType type = GgufType.ofCode(u32());
            metadata.put(key, value(type));
        }
        int alignment = DEFAULT_ALIGNMENT;
        GgufValue align = metadata.get("general.alignment");
        if (align != null) {
            alignment = Math.toIntExact(align.asLong());
            if (alignment <= 0 || Integer.bitCount(alignment) != 1) {
                throw new IllegalArgumentException("general.alignment " + alignment + " is not a power of two");
            }
        }
        List<GgufTensorInfo> tensors = new ArrayList<>();
        for (long i = 0; i < tensorCount; i++) {
            String name = string();
            int nDims = (int) count(u32(), "dimension count of " + name);
            List<Long> dims = new ArrayList<>(nDims);
            for (int d = 0; d < nDims; d++) {
                dims.add(u64());
            }
            int type = (int) u32();
            long offset = u64();
            tensors.add(new GgufTensorInfo(name, dims, type, offset));
        }
        long dataOffset = (position + alignment - 1) / alignment * alignment;
        return new GgufFile((int) version, metadata, tensors, alignment, dataOffset);
    }

    private GgufValue value(GgufType type) throws IOException {
        if (type != GgufType.ARRAY) {
            return new GgufValue(type, null, scalar(type));
        }
        GgufType element = GgufType.ofCode(u32());
        long n = count(u64(), "array length");
        List<Object> items = new ArrayList<>((int) Math.min(n, 1 << 20));
        for (long i = 0; i < n; i++) {
            items.add(element == GgufType.ARRAY ? value(GgufType.ARRAY) : scalar(element));
        }
        return new GgufValue(GgufType.ARRAY, element, items);
    }

    private Object scalar(GgufType type) throws IOException {
        return switch (type) {
            case UINT8 -> (long) (bytes(1).get() & 0xFF);
            case INT8 -> (long) bytes(1).get();
            case UINT16 -> (long) (bytes(2).getShort() & 0xFFFF);
            case INT16 -> (long) bytes(2).getShort();
            case UINT32 -> u32();
            case INT32 -> (long) bytes(4).getInt();
            case UINT64, INT64 -> u64();
            case FLOAT32 -> bytes(4).getFloat();
            case FLOAT64 -> bytes(8).getDouble();
            case BOOL -> {
                int b = bytes(1).get();
                if (b != 0 && b != 1) {
                    throw new IllegalArgumentException("bool value " + b + " at byte " + (position - 1));
                }
                yield b == 1;
            }
            case STRING -> string();
            case ARRAY -> throw new IllegalStateException("arrays are read by value()");
        };
    }

    private String string() throws IOException {
        long length = count(u64(), "string length");
        byte[] utf8 = in.readNBytes((int) length);
        if (utf8.length != length) {
            throw new EOFException("truncated at byte " + (position + utf8.length));
        }
        position += length;
        return new String(utf8, StandardCharsets.UTF_8);
    }

    /** A count or length that cannot exceed what is left of the file (guards against reading garbage). */
    private long count(long n, String what) {
        if (n < 0 || n > fileSize - position || n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(what + " " + Long.toUnsignedString(n) + " at byte " + position
                    + " does not fit the file (" + fileSize + " bytes)");
        }
        return n;
    }

    private long u32() throws IOException {
        return bytes(4).getInt() & 0xFFFF_FFFFL;
    }

    private long u64() throws IOException {
        return bytes(8).getLong();
    }

    private ByteBuffer bytes(int n) throws IOException {
        scratch.clear();
        int read = in.readNBytes(scratch.array(), 0, n);
        if (read != n) {
            throw new EOFException("truncated at byte " + (position + read));
        }
        position += n;
        scratch.limit(n);
        return scratch;
    }
}
