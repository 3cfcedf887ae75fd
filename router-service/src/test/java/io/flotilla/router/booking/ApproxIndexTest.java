package io.flotilla.router.booking;

import io.flotilla.router.core.Fixtures;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class ApproxIndexTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    @Test
    void answersLeadingPrefixMatchesPerWorker() {
        ApproxIndex index = new ApproxIndex(Duration.ofSeconds(120), 1000);
        long[] system = Fixtures.chain(1, 4);
        long[] a = Fixtures.extend(system, 10, 4);
        long[] b = Fixtures.extend(system, 20, 4);
        index.record(a, "w1", T0);
        index.record(b, "w2", T0);
        index.record(new long[]{a[1], a[2]}, "w3", T0); // a hole at block 0: no leading match

        assertThat(index.overlaps(a, T0)).isEqualTo(Map.of("w1", 8, "w2", 4));
        assertThat(index.overlaps(Fixtures.extend(system, 30, 2), T0)).isEqualTo(Map.of("w1", 4, "w2", 4));
        assertThat(index.overlaps(Fixtures.chain(99, 3), T0)).isEmpty();
        assertThat(index.overlaps(new long[0], T0)).isEmpty();
    }

    @Test
    void entriesStopCountingAtTheirTtlAndRecordingRefreshesThem() {
        ApproxIndex index = new ApproxIndex(Duration.ofSeconds(120), 1000);
        long[] a = Fixtures.chain(1, 4);
        index.record(a, "w1", T0);
        index.record(new long[]{a[0], a[1]}, "w1", T0.plusSeconds(60)); // refresh the first two blocks
        assertThat(index.overlaps(a, T0.plusSeconds(119))).isEqualTo(Map.of("w1", 4));
        assertThat(index.overlaps(a, T0.plusSeconds(120))).as("before expire() runs").isEqualTo(Map.of("w1", 2));
        assertThat(index.expire(T0.plusSeconds(120))).isEqualTo(2);
        assertThat(index.size()).isEqualTo(2);
        assertThat(index.expire(T0.plusSeconds(180))).isEqualTo(2);
        assertThat(index.overlaps(a, T0.plusSeconds(180))).isEmpty();
    }

    @Test
    void staysWithinItsBoundByDroppingTheLeastRecentlyRouted() {
        ApproxIndex index = new ApproxIndex(Duration.ofSeconds(120), 6);
        long[] old = Fixtures.chain(1, 4);
        long[] fresh = Fixtures.chain(2, 4);
        index.record(old, "w1", T0);
        index.record(fresh, "w2", T0.plusSeconds(1));
        assertThat(index.size()).isEqualTo(6);
        assertThat(index.overlaps(fresh, T0.plusSeconds(1))).isEqualTo(Map.of("w2", 4));
        assertThat(index.overlaps(old, T0.plusSeconds(1))).as("old blocks 0 and 1 evicted").isEmpty();
    }

    @Test
    void forgettingAWorkerDropsOnlyItsEntries() {
        ApproxIndex index = new ApproxIndex(Duration.ofSeconds(120), 1000);
        long[] a = Fixtures.chain(1, 4);
        index.record(a, "w1", T0);
        index.record(a, "w2", T0);
        index.forgetWorker("w1");
        assertThat(index.overlaps(a, T0)).isEqualTo(Map.of("w2", 4));
        assertThat(index.size()).isEqualTo(4);
    }
    @Test
    void agreesWithAPlainModelOfHoldersOverRandomRecordsExpiriesAndForgetting() {
        java.util.SplittableRandom random = new java.util.SplittableRandom(32);
        for (int run = 0; run < 50; run++) {
            ApproxIndex index = new ApproxIndex(Duration.ofSeconds(10), 1 << 20);
            // block -> worker -> expiry (ms): every holder, however many a block has
            Map<Long, Map<String, Long>> model = new java.util.HashMap<>();
            long[] universe = new long[24];
            for (int i = 0; i < universe.length; i++) {
                universe[i] = random.nextLong();
            }
            long now = T0.toEpochMilli();
            for (int step = 0; step < 300; step++) {
                now += random.nextInt(0, 800);
                Instant at = Instant.ofEpochMilli(now);
                int op = random.nextInt(10);
                if (op < 5) {
                    long[] chain = java.util.Arrays.copyOfRange(universe, random.nextInt(0, 4),
                            random.nextInt(4, universe.length + 1));
                    String worker = "w" + random.nextInt(5);
                    index.record(chain, worker, at);
                    for (long b : chain) {
                        model.computeIfAbsent(b, k -> new java.util.HashMap<>()).put(worker, now + 10_000);
                    }
                } else if (op < 6) {
                    String worker = "w" + random.nextInt(5);
                    index.forgetWorker(worker);
                    model.values().forEach(holders -> holders.remove(worker));
                } else if (op < 7) {
                    index.expire(at);
                    long t = now;
                    model.values().forEach(holders -> holders.values().removeIf(e -> e <= t));
                    assertThat(index.size()).as("run %d step %d", run, step)
                            .isEqualTo(model.values().stream().mapToInt(Map::size).sum());
                } else {
                    long[] query = java.util.Arrays.copyOfRange(universe, random.nextInt(0, 3), universe.length);
                    Map<String, Integer> expected = new java.util.HashMap<>();
                    for (int w = 0; w < 5; w++) {
                        int depth = 0;
                        while (depth < query.length && model.getOrDefault(query[depth], Map.of())
                                .getOrDefault("w" + w, Long.MIN_VALUE) > now) {
                            depth++;
                        }
                        if (depth > 0) {
                            expected.put("w" + w, depth);
                        }
                    }
                    assertThat(index.overlaps(query, at)).as("run %d step %d", run, step).isEqualTo(expected);
                }
            }
        }
    }
}
