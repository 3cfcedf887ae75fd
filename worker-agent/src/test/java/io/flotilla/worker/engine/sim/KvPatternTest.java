package io.flotilla.worker.engine.sim;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.assertj.core.api.Assertions.assertThat;

class KvPatternTest {

    private static final String LAYOUT = "bf16/bs16/paged";

    @Test
    void storedBlockMatchesTheExpectedPatternByteForByte() {
        KvPayloadStore store = new KvPayloadStore(8, 1000, LAYOUT);
        store.fillPattern(5, 0x1234_5678_9ABC_DEF0L);

        ByteBuffer copy = ByteBuffer.allocate(1000);
        store.read(5, copy);

        assertThat(copy.array()).isEqualTo(KvPattern.expectedPattern(0x1234_5678_9ABC_DEF0L, LAYOUT, 1000));
        assertThat(KvPattern.verify(copy.flip(), 0x1234_5678_9ABC_DEF0L, LAYOUT)).isTrue();
    }

    @Test
    void aCorruptedByteIsFoundAtItsOffset() {
        byte[] bytes = KvPattern.expectedPattern(42, LAYOUT, 4096);
        bytes[1234] ^= 0x01;

        ByteBuffer data = ByteBuffer.wrap(bytes);
        assertThat(KvPattern.firstMismatch(data, 42, KvPattern.layoutSeed(LAYOUT))).isEqualTo(1234);
        assertThat(KvPattern.verify(data, 42, LAYOUT)).isFalse();
    }

    @Test
    void aCorruptedTrailingByteOfAnUnalignedLengthIsFound() {
        byte[] bytes = KvPattern.expectedPattern(42, LAYOUT, 13);
        bytes[12] ^= (byte) 0x80;
        assertThat(KvPattern.firstMismatch(ByteBuffer.wrap(bytes), 42, KvPattern.layoutSeed(LAYOUT))).isEqualTo(12);
    }

    @Test
    void hashAndLayoutBothChangeThePattern() {
        byte[] base = KvPattern.expectedPattern(42, LAYOUT, 64);
        assertThat(KvPattern.expectedPattern(43, LAYOUT, 64)).isNotEqualTo(base);
        assertThat(KvPattern.expectedPattern(42, "fp8/bs16/paged", 64)).isNotEqualTo(base);
        assertThat(KvPattern.expectedPattern(42, LAYOUT, 64)).isEqualTo(base);
        assertThat(KvPattern.expectedPattern(42, LAYOUT, 20)).containsExactly(java.util.Arrays.copyOf(base, 20));
    }

    @Test
    void patternIsPinnedSoAgentsOfOtherVersionsAgree() {
        // Changing these values breaks byte-for-byte verification between agents of different builds.
        ByteBuffer first8 = ByteBuffer.wrap(KvPattern.expectedPattern(0, "", 8)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        long layoutSeed = KvPattern.layoutSeed("");
        assertThat(first8.getLong()).isEqualTo(KvPattern.mix(layoutSeed + 0x9E3779B97F4A7C15L));
        assertThat(layoutSeed).isEqualTo(KvPattern.mix(0xcbf29ce484222325L));
    }

    @Test
    void slotsCanBeWrittenAndReadBack() {
        KvPayloadStore store = new KvPayloadStore(3, 64, LAYOUT);
        byte[] incoming = KvPattern.expectedPattern(9, LAYOUT, 64);

        store.write(2, ByteBuffer.wrap(incoming));

        assertThat(store.firstMismatch(2, 9)).isEqualTo(-1);
        assertThat(store.firstMismatch(1, 9)).isZero();
    }

    @Test
    void slabsAreAllocatedOnFirstUse() {
        int perBlock = 64 * 1024;
        KvPayloadStore store = new KvPayloadStore(1024, perBlock, LAYOUT); // 64 MiB when full
        assertThat(store.allocatedBytes()).isZero();

        store.fillPattern(0, 1);
        store.fillPattern(1, 2);

        assertThat(store.allocatedBytes()).isEqualTo(KvPayloadStore.TARGET_SLAB_BYTES);
        assertThat(store.firstMismatch(0, 1)).isEqualTo(-1);
        assertThat(store.firstMismatch(1, 2)).isEqualTo(-1);
    }
}
