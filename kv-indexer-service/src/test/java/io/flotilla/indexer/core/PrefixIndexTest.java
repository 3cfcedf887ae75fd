package io.flotilla.indexer.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class PrefixIndexTest {

    static Map<String, Integer> matches(PrefixIndex index, long... query) {
        return index.findMatches(query).stream()
                .collect(Collectors.toMap(WorkerMatch::workerId, WorkerMatch::matchedBlocks));
    }

    /** Holdings "a:1,2,3" mean worker a holds seq hashes 1, 2 and 3. */
    static Stream<Arguments> queries() {
        return Stream.of(
                Arguments.of("full match", List.of("a:1,2,3"), new long[]{1, 2, 3}, Map.of("a", 3)),
                Arguments.of("match stops at first missing block", List.of("a:1,2,4"), new long[]{1, 2, 3, 4}, Map.of("a", 2)),
                Arguments.of("first block missing means no match", List.of("a:2,3"), new long[]{1, 2, 3}, Map.of()),
                Arguments.of("several workers, different depths", List.of("a:1,2,3", "b:1", "c:1,2"), new long[]{1, 2, 3},
                        Map.of("a", 3, "b", 1, "c", 2)),
                Arguments.of("query longer than holdings", List.of("a:1,2"), new long[]{1, 2, 3, 4, 5}, Map.of("a", 2)),
                Arguments.of("empty query", List.of("a:1"), new long[]{}, Map.of()),
                Arguments.of("unknown hashes", List.of("a:1"), new long[]{9}, Map.of()),
                Arguments.of("hash 0 and unsigned max are ordinary", List.of("a:0,-1", "b:0"), new long[]{0, -1},
                        Map.of("a", 2, "b", 1)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("queries")
    void findsLeadingMatches(String name, List<String> holdings, long[] query, Map<String, Integer> expected) {
        PrefixIndex index = new PrefixIndex(4);
        for (String h : holdings) {
            String[] parts = h.split(":");
            for (String s : parts[1].split(",")) {
                index.store(parts[0], Long.parseLong(s));
            }
        }
        assertThat(matches(index, query)).isEqualTo(expected);
    }

    @Test
    void removeClearDropAndDigest() {
        PrefixIndex index = new PrefixIndex();
        assertThat(index.store("a", 1)).isTrue();
        assertThat(index.store("a", 1)).isFalse();
        index.store("a", 2);
        index.store("b", 1);
        assertThat(index.blockCount("a")).isEqualTo(2);
        assertThat(index.xorDigest("a")).isEqualTo(1 ^ 2);
        assertThat(index.remove("a", 1)).isTrue();
        assertThat(index.remove("a", 1)).isFalse();
        assertThat(index.remove("zz", 1)).isFalse();
        assertThat(index.blockCount("a")).isEqualTo(1);
        assertThat(index.xorDigest("a")).isEqualTo(2);
        assertThat(matches(index, 1, 2)).isEqualTo(Map.of("b", 1));

        index.clear("b");
        assertThat(index.blockCount("b")).isZero();
        assertThat(index.workers()).containsExactlyInAnyOrder("a", "b");

        index.dropWorker("a");
        assertThat(index.workers()).containsExactly("b");
        assertThat(index.blocksOf("a")).isEmpty();
        assertThat(index.residentPairs()).isZero();
        // the freed slot goes to a new worker with nothing inherited
        index.store("c", 5);
        assertThat(index.blocksOf("c")).containsExactly(5);
        assertThat(matches(index, 2)).isEmpty();
    }

    @Test
    void replaceMakesTheSetExactAndKeepsDigest() {
        PrefixIndex index = new PrefixIndex();
        index.store("a", 1);
        index.store("a", 2);
        index.store("a", 3);
        index.store("b", 3);
        index.replace("a", new long[]{2, 3, 4, 4});
        assertThat(index.blocksOf("a")).containsExactlyInAnyOrder(2, 3, 4);
        assertThat(index.blockCount("a")).isEqualTo(3);
        assertThat(index.xorDigest("a")).isEqualTo(2 ^ 3 ^ 4);
        assertThat(index.blocksOf("b")).containsExactly(3);
    }

    @Test
    void moreThan64WorkersSpanGroups() {
        PrefixIndex index = new PrefixIndex();
        Map<String, Integer> expected = new HashMap<>();
        for (int w = 0; w < 150; w++) {
            int depth = w % 5;
            for (int b = 1; b <= depth; b++) {
                index.store("w" + w, b);
            }
            if (depth > 0) {
                expected.put("w" + w, depth);
            }
        }
        assertThat(matches(index, 1, 2, 3, 4, 5)).isEqualTo(expected);
        index.dropWorker("w129");
        expected.remove("w129");
        assertThat(matches(index, 1, 2, 3, 4, 5)).isEqualTo(expected);
        assertThat(index.exportBlocks().get("w149")).containsExactlyInAnyOrder(1, 2, 3, 4);
        assertThat(index.exportBlocks()).hasSize(expected.size()); // depth-0 workers never took a slot
    }

    /**
     * Slot reuse under a running query: worker "new" (full holder of the query) and worker "old"
     * (holds none of it) keep taking over the same slot. A reader must never attribute the
     * query's blocks to "old". Bounded, no sleeps.
     */
    @Test
    void concurrentQueryNeverAttributesAReusedSlotToItsFormerOwner() throws Exception {
        PrefixIndex index = new PrefixIndex();
        long[] query = {11, 12, 13, 14, 15, 16, 17, 18};
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> violation = new AtomicReference<>();
        Thread reader = new Thread(() -> {
            while (!done.get() && violation.get() == null) {
                for (WorkerMatch m : index.findMatches(query)) {
                    if (!m.workerId().equals("new")) {
                        violation.set(m.toString());
                    }
                }
            }
        });
        reader.start();
        for (int i = 0; i < 100_000 && violation.get() == null; i++) {
            index.store("old", 99);
            index.dropWorker("old");
            for (long h : query) {
                index.store("new", h);
            }
            index.dropWorker("new");
        }
        done.set(true);
        reader.join();
        assertThat(violation.get()).isNull();
    }

    /** Holdings "a:1d,2h,3k": worker a holds 1 on the device, 2 in host memory, 3 on disk. */
    static Stream<Arguments> tieredQueries() {
        return Stream.of(
                Arguments.of("device only", List.of("a:1d,2d"), new long[]{1, 2, 3}, Map.of("a", new WorkerMatch("a", 2, 2, 0, 0))),
                Arguments.of("host after the device prefix", List.of("a:1d,2h,3h"), new long[]{1, 2, 3, 4},
                        Map.of("a", new WorkerMatch("a", 1, 1, 2, 0))),
                Arguments.of("disk only", List.of("a:1k,2k"), new long[]{1, 2}, Map.of("a", new WorkerMatch("a", 0, 0, 0, 2))),
                Arguments.of("best tier counts: device beats host beats disk", List.of("a:1d,1h,2h,2k,3k"),
                        new long[]{1, 2, 3}, Map.of("a", new WorkerMatch("a", 1, 1, 1, 1))),
                Arguments.of("device blocks after a host block", List.of("a:1h,2d"), new long[]{1, 2},
                        Map.of("a", new WorkerMatch("a", 0, 1, 1, 0))),
                Arguments.of("a gap in every tier ends the prefix", List.of("a:1d,3h", "b:1h,2k,3d"), new long[]{1, 2, 3},
                        Map.of("a", new WorkerMatch("a", 1, 1, 0, 0), "b", new WorkerMatch("b", 0, 1, 1, 1))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("tieredQueries")
    void findMatchesCountsTheAnyTierPrefixByBestTier(String name, List<String> holdings, long[] query,
                                                     Map<String, WorkerMatch> expected) {
        PrefixIndex index = new PrefixIndex(8);
        for (String h : holdings) {
            String[] parts = h.split(":");
            for (String b : parts[1].split(",")) {
                int tier = switch (b.charAt(b.length() - 1)) {
                    case 'h' -> Tiers.HOST;
                    case 'k' -> Tiers.DISK;
                    default -> Tiers.DEVICE;
                };
                index.store(parts[0], tier, Long.parseLong(b.substring(0, b.length() - 1)));
            }
        }
        assertThat(index.findMatches(query).stream().collect(Collectors.toMap(WorkerMatch::workerId, m -> m)))
                .isEqualTo(expected);
    }
}
