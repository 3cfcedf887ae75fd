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
}
