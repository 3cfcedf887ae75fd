package io.flotilla.worker.engine.vllm;

import org.junit.jupiter.api.Test;

import java.util.HexFormat;
import java.util.List;

import static io.flotilla.worker.engine.vllm.MsgspecWire.batchArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.batchMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.clearedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.clearedMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.hashes;
import static io.flotilla.worker.engine.vllm.MsgspecWire.removedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.removedMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedArray;
import static io.flotilla.worker.engine.vllm.MsgspecWire.storedMap;
import static io.flotilla.worker.engine.vllm.MsgspecWire.u64;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class VllmEventDecoderTest {

    private static final int[] TOKENS = {1, 2, 3, 4, 5, 6, 7, 8};

    private static VllmEventBatch decode(byte[] payload) {
        return VllmEventDecoder.decode(payload);
    }

    @Test
    void goldenBytesOfTheArrayFormAsMsgspecWritesThem() {
        // KVEventBatch(ts=1.5, events=[BlockStored(block_hashes=[1], parent_block_hash=None, token_ids=[1, 2],
        //   block_size=2, lora_id=None, medium=None)]) with array_like=True, tag=True
        byte[] wire = HexFormat.of().parseHex("92" + "cb3ff8000000000000" + "91" + "97" + "ab426c6f636b53746f726564"
                + "9101" + "c0" + "920102" + "02" + "c0" + "c0");
        assertThat(MsgspecWire.pack(List.of(1.5, List.of(storedArray(hashes(1), null, new int[]{1, 2}, 2, null, null, false)))))
                .as("the test encoder writes what msgspec writes").isEqualTo(wire);
        VllmEventBatch b = decode(wire);
        assertThat(b.ts()).isEqualTo(1.5);
        assertThat(b.dataParallelRank()).isNull();
        assertThat(b.events()).containsExactly(new VllmKvEvent.BlockStored(new long[]{1}, null, new int[]{1, 2}, 2, null, null));
    }

    @Test
    void goldenBytesOfAnUnsignedHashAndARawDigest() {
        // ["BlockRemoved", [0xfffffffffffffffe]] and ["BlockRemoved", [b"<32 bytes>"]]
        byte[] u64 = HexFormat.of().parseHex("92cb0000000000000000" + "91" + "92ac426c6f636b52656d6f766564" + "91cffffffffffffffffe");
        assertThat(((VllmKvEvent.BlockRemoved) decode(u64).events().get(0)).blockHashes()).containsExactly(-2L);

        String digest = "00112233445566778899aabbccddeeff" + "0123456789abcdef" + "8000000000000001";
        byte[] bin = HexFormat.of().parseHex("92cb0000000000000000" + "91" + "92ac426c6f636b52656d6f766564" + "91c420" + digest);
        assertThat(((VllmKvEvent.BlockRemoved) decode(bin).events().get(0)).blockHashes())
                .as("last 8 bytes, big-endian").containsExactly(0x8000000000000001L);
    }

    @Test
    void blockStoredRoundTripsInBothForms() {
        long big = 0xF000_0000_0000_0001L; // >= 2^63: uint64 on the wire
        var expected = new VllmKvEvent.BlockStored(new long[]{big, 42}, 7L, TOKENS, 4, 3, "CPU");
        byte[] array = batchArray(10.25, List.of(storedArray(hashes(big, 42), u64(7), TOKENS, 4, 3, "CPU", false)), 2);
        byte[] map = batchMap(10.25, List.of(storedMap(hashes(big, 42), u64(7), TOKENS, 4, 3, "CPU")), 2);
        for (byte[] wire : List.of(array, map)) {
            VllmEventBatch b = decode(wire);
            assertThat(b.events()).containsExactly(expected);
            assertThat(b.dataParallelRank()).isEqualTo(2);
            assertThat(b.ts()).isEqualTo(10.25);
        }
    }

    @Test
    void defaultsMayBeOmittedInBothForms() {
        var expected = new VllmKvEvent.BlockStored(new long[]{5}, null, new int[]{1, 2, 3, 4}, 4, null, null);
        byte[] olderArray = batchArray(0, List.of(storedArray(hashes(5), null, new int[]{1, 2, 3, 4}, 4, null, null, true)), null);
        byte[] map = batchMap(0, List.of(storedMap(hashes(5), null, new int[]{1, 2, 3, 4}, 4, null, null)), null);
        assertThat(decode(olderArray).events()).containsExactly(expected);
        assertThat(decode(map).events()).containsExactly(expected);
        assertThat(decode(map).dataParallelRank()).isNull();
        assertThat(decode(batchArray(0, List.of(removedArray(hashes(9), null)), null)).events())
                .containsExactly(new VllmKvEvent.BlockRemoved(new long[]{9}, null));
        assertThat(decode(batchMap(0, List.of(removedMap(hashes(9), null)), null)).events())
                .containsExactly(new VllmKvEvent.BlockRemoved(new long[]{9}, null));
    }

    @Test
    void removedAndClearedRoundTripInBothForms() {
        long big = 0x8000_0000_0000_0000L;
        var removed = new VllmKvEvent.BlockRemoved(new long[]{big, 1}, "GPU");
        assertThat(decode(batchArray(1, List.of(removedArray(hashes(big, 1), "GPU"), clearedArray()), null)).events())
                .containsExactly(removed, new VllmKvEvent.AllBlocksCleared());
        assertThat(decode(batchMap(1, List.of(removedMap(hashes(big, 1), "GPU"), clearedMap()), null)).events())
                .containsExactly(removed, new VllmKvEvent.AllBlocksCleared());
    }

    @Test
    void rawDigestHashesAndParentsDecodeToTheirLastEightBytes() {
        byte[] digest = new byte[32];
        for (int i = 0; i < 32; i++) {
            digest[i] = (byte) (0xA0 + i);
        }
        long last8 = 0xB8B9BABBBCBDBEBFL;
        byte[] array = batchArray(0, List.of(storedArray(List.of(digest), digest, new int[]{1, 2}, 2, null, null, false)), null);
        byte[] map = batchMap(0, List.of(storedMap(List.of(digest), digest, new int[]{1, 2}, 2, null, null)), null);
        for (byte[] wire : List.of(array, map)) {
            var s = (VllmKvEvent.BlockStored) decode(wire).events().get(0);
            assertThat(s.blockHashes()).containsExactly(last8);
            assertThat(s.parentBlockHash()).isEqualTo(last8);
        }
    }

    @Test
    void newerFieldsAreIgnoredAndUnknownEventsAreKept() {
        List<Object> withExtras = new java.util.ArrayList<>(storedArray(hashes(1), null, new int[]{1, 2}, 2, null, "GPU", false));
        withExtras.add("adapter-name"); // lora_name
        withExtras.add(null); // extra_keys
        withExtras.add("a field a newer engine appends");
        var map = new java.util.LinkedHashMap<>(storedMap(hashes(1), null, new int[]{1, 2}, 2, null, null));
        map.put("extra_keys", List.of());
        byte[] wire = batchArray(0, List.of(withExtras, map, List.of("BlockPinned", hashes(1))), null);
        List<VllmKvEvent> events = decode(wire).events();
        assertThat(events.get(0)).isEqualTo(new VllmKvEvent.BlockStored(new long[]{1}, null, new int[]{1, 2}, 2, null, "GPU",
                "adapter-name", null));
        assertThat(events.get(1)).isEqualTo(new VllmKvEvent.BlockStored(new long[]{1}, null, new int[]{1, 2}, 2, null, null,
                null, List.of()));
        assertThat(events.get(2)).isEqualTo(new VllmKvEvent.Unknown("BlockPinned"));
    }

    @Test
    void garbageIsAFormatException() {
        assertThatThrownBy(() -> decode(new byte[]{(byte) 0xc1})).isInstanceOf(VllmEventDecoder.FormatException.class);
        assertThatThrownBy(() -> decode(MsgspecWire.pack("hello"))).isInstanceOf(VllmEventDecoder.FormatException.class);
        assertThatThrownBy(() -> decode(MsgspecWire.pack(List.of(1.0, List.of(List.of(7L))))))
                .isInstanceOf(VllmEventDecoder.FormatException.class);
        assertThatThrownBy(() -> decode(batchArray(0, List.of(List.of("BlockRemoved", "not-a-list")), null)))
                .isInstanceOf(VllmEventDecoder.FormatException.class);
    }
}
