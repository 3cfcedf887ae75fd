package io.flotilla.indexer.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.HashMap;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class BlockTableTest {

    /** op: "or h bits" / "andNot h bits"; expect: returned previous mask and mask after. */
    static Stream<Arguments> operations() {
        return Stream.of(
                Arguments.of("store into empty", new long[][]{{1, 7, 0b01}}, new long[]{0}, 7, 0b01),
                Arguments.of("second worker on same block", new long[][]{{1, 7, 0b01}, {1, 7, 0b10}}, new long[]{0, 0b01}, 7, 0b11),
                Arguments.of("idempotent store", new long[][]{{1, 7, 0b01}, {1, 7, 0b01}}, new long[]{0, 0b01}, 7, 0b01),
                Arguments.of("remove one worker", new long[][]{{1, 7, 0b11}, {0, 7, 0b01}}, new long[]{0, 0b11}, 7, 0b10),
                Arguments.of("remove absent", new long[][]{{0, 7, 0b01}}, new long[]{0}, 7, 0),
                Arguments.of("tombstone then re-store", new long[][]{{1, 7, 1}, {0, 7, 1}, {1, 7, 4}}, new long[]{0, 1, 0}, 7, 4),
                Arguments.of("hash 0 is a key", new long[][]{{1, 0, 0b100}, {1, 0, 0b1}}, new long[]{0, 0b100}, 0, 0b101),
                Arguments.of("hash -1 (unsigned max)", new long[][]{{1, -1, 2}}, new long[]{0}, -1, 2),
                Arguments.of("remove from hash 0", new long[][]{{1, 0, 3}, {0, 0, 1}}, new long[]{0, 3}, 0, 2));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("operations")
    void appliesOperations(String name, long[][] ops, long[] expectedBefore, long key, long expectedMask) {
        BlockTable t = new BlockTable(4);
        for (int i = 0; i < ops.length; i++) {
            long before = ops[i][0] == 1 ? t.or(ops[i][1], ops[i][2]) : t.andNot(ops[i][1], ops[i][2]);
            assertThat(before).as("op %d", i).isEqualTo(expectedBefore[i]);
        }
        assertThat(t.get(key)).isEqualTo(expectedMask);
        assertThat(t.size()).isEqualTo(expectedMask == 0 ? 0 : 1);
    }

    @Test
    void agreesWithHashMapThroughGrowthTombstonesAndShrink() {
        BlockTable t = new BlockTable(1);
        Map<Long, Long> ref = new HashMap<>();
        SplittableRandom rnd = new SplittableRandom(42);
        for (int step = 0; step < 200_000; step++) {
            long key = rnd.nextInt(5_000) - 2; // includes 0 and negatives
            long bits = 1L << rnd.nextInt(64);
            if (rnd.nextInt(3) > 0) {
                assertThat(t.or(key, bits)).isEqualTo(ref.getOrDefault(key, 0L));
                ref.merge(key, bits, (a, b) -> a | b);
            } else {
                assertThat(t.andNot(key, bits)).isEqualTo(ref.getOrDefault(key, 0L));
                ref.computeIfPresent(key, (k, m) -> (m & ~bits) == 0 ? null : m & ~bits);
            }
            if (step % 50_000 == 49_999) {
                long drop = 1L << rnd.nextInt(64);
                t.rewriteAll((h, m) -> m & ~drop);
                ref.replaceAll((k, m) -> m & ~drop);
                ref.values().removeIf(m -> m == 0);
            }
        }
        assertThat(t.size()).isEqualTo(ref.size());
        for (long key = -2; key < 5_000; key++) {
            assertThat(t.get(key)).as("key %d", key).isEqualTo(ref.getOrDefault(key, 0L));
        }
        Map<Long, Long> visited = new HashMap<>();
        t.forEach(visited::put);
        assertThat(visited).isEqualTo(ref);
    }

    @Test
    void shrinksWhenMostlyEmptyAndGrowsAtThreeQuarters() {
        BlockTable t = new BlockTable(16);
        assertThat(t.capacity()).isEqualTo(32);
        for (long k = 1; k <= 24; k++) {
            t.or(k, 1);
        }
        assertThat(t.capacity()).isEqualTo(32);
        t.or(25, 1);
        assertThat(t.capacity()).isEqualTo(64);
        for (long k = 1; k <= 100_000; k++) {
            t.or(k, 1);
        }
        int big = t.capacity();
        t.rewriteAll((h, m) -> h <= 10 ? m : 0);
        assertThat(t.capacity()).isLessThan(big);
        assertThat(t.size()).isEqualTo(10);
        assertThat(t.get(10)).isEqualTo(1);
        assertThat(t.get(11)).isZero();
    }

    /**
     * Readers race one writer that only ever gives key k the bit {@code k % 64}: a reader must never
     * see any other bit on k (a torn mask or another key's mask), through growth, tombstones and
     * rehashes. Bounded work, no sleeps; it can miss a race but never fails spuriously.
     */
    @Test
    void concurrentReaderNeverSeesAnotherKeysMask() throws Exception {
        BlockTable t = new BlockTable(16);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> violation = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            SplittableRandom rnd = new SplittableRandom(1);
            while (!done.get() && violation.get() == null) {
                long k = 1 + rnd.nextInt(20_000);
                long m = t.get(k);
                if ((m & ~(1L << (k % 64))) != 0) {
                    violation.set("key " + k + " mask " + Long.toBinaryString(m));
                }
            }
        });
        reader.start();
        SplittableRandom rnd = new SplittableRandom(2);
        for (int i = 0; i < 2_000_000 && violation.get() == null; i++) {
            long k = 1 + rnd.nextInt(20_000);
            if (rnd.nextBoolean()) {
                t.or(k, 1L << (k % 64));
            } else {
                t.andNot(k, 1L << (k % 64));
            }
        }
        done.set(true);
        reader.join();
        assertThat(violation.get()).isNull();
    }
}
