package io.flotilla.gguf;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class GgufRoundTripTest {

    @TempDir
    Path dir;

    @Test
    void everyMetadataTypeReadsBackAsWritten() throws IOException {
        Map<String, GgufValue> metadata = new LinkedHashMap<>();
        metadata.put("u8", GgufValue.uint8(255));
        metadata.put("i8", GgufValue.int8(-128));
        metadata.put("u16", GgufValue.uint16(65535));
        metadata.put("i16", GgufValue.int16(-32768));
        metadata.put("u32", GgufValue.uint32(0xFFFF_FFFFL));
        metadata.put("i32", GgufValue.int32(Integer.MIN_VALUE));
        metadata.put("u64", GgufValue.uint64(-1L)); // 2^64 - 1
        metadata.put("i64", GgufValue.int64(Long.MIN_VALUE));
        metadata.put("f32", GgufValue.float32(1e-5f));
        metadata.put("f64", GgufValue.float64(Math.PI));
        metadata.put("bool.true", GgufValue.bool(true));
        metadata.put("bool.false", GgufValue.bool(false));
        metadata.put("string", GgufValue.string("héllo wörld — 日本語 🙂"));
        metadata.put("string.empty", GgufValue.string(""));
        metadata.put("array.strings", GgufValue.strings(List.of("a", "Ġthe", "<|im_end|>")));
        metadata.put("array.i32", GgufValue.int32s(new int[]{1, 3, -6}));
        metadata.put("array.f32", GgufValue.float32s(new float[]{0.5f, -1f}));
        metadata.put("array.bool", GgufValue.array(GgufType.BOOL, List.of(true, false)));
        metadata.put("array.u8", GgufValue.array(GgufType.UINT8, List.of(0L, 200L)));
        metadata.put("array.empty", GgufValue.array(GgufType.UINT64, List.of()));
        metadata.put("array.nested", GgufValue.array(GgufType.ARRAY,
                List.of(GgufValue.int32s(new int[]{7}), GgufValue.strings(List.of("x", "y")))));
        GgufWriter writer = new GgufWriter();
        metadata.forEach(writer::put);
        Path file = dir.resolve("all.gguf");
        writer.write(file);

        GgufFile read = GgufReader.read(file);

        assertThat(read.version()).isEqualTo(3);
        assertThat(read.metadata()).containsExactlyEntriesOf(metadata);
        assertThat(read.tensors()).isEmpty();
        assertThat(read.require("u64").asLong()).isEqualTo(-1L);
        assertThat(read.require("array.nested").asList()).hasSize(2);
    }

    @Test
    void tensorsAreAlignedAndReadBack() throws IOException {
        float[] a = {1f, 2f, 3f};          // 12 bytes: the next tensor must be padded to 32
        float[] b = new float[2 * 5];
        for (int i = 0; i < b.length; i++) {
            b[i] = i * 0.25f - 1f;
        }
        Path file = dir.resolve("tensors.gguf");
        new GgufWriter().put("general.architecture", GgufValue.string("llama"))
                .addF32("a", new long[]{3}, a).addF32("b", new long[]{5, 2}, b).write(file);

        GgufFile read = GgufReader.read(file);

        assertThat(read.alignment()).isEqualTo(32);
        assertThat(read.dataOffset() % 32).isZero();
        assertThat(read.tensors()).extracting(GgufTensorInfo::name).containsExactly("a", "b");
        GgufTensorInfo tb = read.tensor("b").orElseThrow();
        assertThat(tb.dims()).containsExactly(5L, 2L);
        assertThat(tb.offset()).isEqualTo(32);
        assertThat(tb.ggmlType()).isEqualTo(GgufTensorInfo.F32);
        assertThat(GgufReader.readF32(file, read, read.tensors().get(0))).containsExactly(a);
        assertThat(GgufReader.readF32(file, read, tb)).containsExactly(b);
        assertThat(Files.size(file)).isEqualTo(read.dataOffset() + 32 + 64);
    }

    @Test
    void generalAlignmentIsHonoured() throws IOException {
        Path file = dir.resolve("aligned.gguf");
        new GgufWriter().put("general.alignment", GgufValue.uint32(64))
                .addF32("a", new long[]{1}, new float[]{1f}).addF32("b", new long[]{1}, new float[]{2f}).write(file);

        GgufFile read = GgufReader.read(file);

        assertThat(read.alignment()).isEqualTo(64);
        assertThat(read.dataOffset() % 64).isZero();
        assertThat(read.tensor("b").orElseThrow().offset()).isEqualTo(64);
        assertThat(GgufReader.readF32(file, read, read.tensor("b").orElseThrow())).containsExactly(2f);
    }

    @Test
    void headerIsLittleEndianGgufV3() throws IOException {
        Path file = dir.resolve("header.gguf");
        new GgufWriter().put("k", GgufValue.uint32(7)).write(file);
        ByteBuffer bytes = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);

        assertThat(new String(Files.readAllBytes(file), 0, 4, java.nio.charset.StandardCharsets.US_ASCII)).isEqualTo("GGUF");
        assertThat(bytes.getInt(4)).isEqualTo(3);
        assertThat(bytes.getLong(8)).isZero();                 // tensors
        assertThat(bytes.getLong(16)).isEqualTo(1);            // metadata entries
        assertThat(bytes.getLong(24)).isEqualTo(1);            // key length
        assertThat(bytes.get(32)).isEqualTo((byte) 'k');
        assertThat(bytes.getInt(33)).isEqualTo(GgufType.UINT32.code());
        assertThat(bytes.getInt(37)).isEqualTo(7);
    }

    @Test
    void valuesOutOfTheirTypesRangeAreRefused() {
        assertThatThrownBy(() -> GgufValue.uint8(256)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GgufValue.uint32(-1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GgufValue.array(GgufType.INT32, List.of(1))) // an Integer, not a Long
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> GgufValue.string("x").asLong()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void notAGgufIsRefusedNamingTheFile() throws IOException {
        Path file = dir.resolve("not.gguf");
        Files.writeString(file, "this is not a model, just some text long enough");

        assertThatThrownBy(() -> GgufReader.read(file)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not.gguf").hasMessageContaining("not a GGUF file");
    }

    @Test
    void aTruncatedFileIsRefused() throws IOException {
        Path file = dir.resolve("whole.gguf");
        new GgufWriter().put("tokens", GgufValue.strings(List.of("a", "b", "c"))).write(file);
        byte[] whole = Files.readAllBytes(file);
        Path cut = dir.resolve("cut.gguf");
        Files.write(cut, java.util.Arrays.copyOf(whole, whole.length / 2)); // inside the token strings

        assertThatThrownBy(() -> GgufReader.read(cut)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("cut.gguf");
    }
}
