package io.flotilla.bench.stats;

import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.data.Offset.offset;

class LatencyStatsTest {

    @Test
    void percentilesInterpolateBetweenClosestRanks() {
        LatencyStats s = new LatencyStats();
        for (int v = 100; v >= 1; v--) {
            s.add(v);
        }
        assertThat(s.percentile(50)).isCloseTo(50.5, offset(1e-9));
        assertThat(s.percentile(90)).isCloseTo(90.1, offset(1e-9));
        assertThat(s.percentile(99)).isCloseTo(99.01, offset(1e-9));
        assertThat(s.percentile(0)).isEqualTo(1);
        assertThat(s.percentile(100)).isEqualTo(100);
        assertThat(s.mean()).isEqualTo(50.5);
        assertThat(s.count()).isEqualTo(100);
    }

    @Test
    void smallSamples() {
        LatencyStats one = new LatencyStats();
        one.add(7);
        assertThat(one.percentile(99)).isEqualTo(7);

        LatencyStats two = new LatencyStats();
        two.add(10);
        two.add(20);
        assertThat(two.percentile(50)).isEqualTo(15);
        assertThat(two.percentile(90)).isEqualTo(19);
    }

    @Test
    void emptySampleIsNullInJsonAndNaNIsIgnored() {
        LatencyStats s = new LatencyStats();
        s.add(Double.NaN);
        assertThat(s.count()).isZero();
        assertThat(s.percentile(50)).isNaN();
        Map<String, Object> json = s.summary();
        assertThat(json).containsEntry("p50", null).containsEntry("p90", null).containsEntry("p99", null)
                .containsEntry("mean", null).containsEntry("count", 0L);
    }

    @Test
    void aFullReservoirKeepsExactCountAndMeanAndAPlausibleMedian() {
        LatencyStats s = new LatencyStats(1000, 1);
        for (int i = 1; i <= 100_000; i++) {
            s.add(i);
        }
        assertThat(s.count()).isEqualTo(100_000);
        assertThat(s.mean()).isEqualTo(50_000.5);
        assertThat(s.sortedValues()).hasSize(1000);
        assertThat(s.percentile(50)).isCloseTo(50_000, offset(6_000.0));
    }

    @Test
    void sloTable() {
        SloPolicy both = new SloPolicy(200.0, 20.0);
        assertThat(both.meets(true, 200, 20)).isTrue();
        assertThat(both.meets(true, 200.1, 10)).isFalse();
        assertThat(both.meets(true, 100, 20.5)).isFalse();
        assertThat(both.meets(true, 100, Double.NaN)).as("single-chunk answer has no ITL").isTrue();
        assertThat(both.meets(true, Double.NaN, 1)).as("no first token").isFalse();
        assertThat(both.meets(false, 1, 1)).as("failed").isFalse();

        SloPolicy ttftOnly = new SloPolicy(200.0, null);
        assertThat(ttftOnly.meets(true, 150, 1e9)).isTrue();
        assertThat(SloPolicy.NONE.defined()).isFalse();
        assertThat(SloPolicy.NONE.meets(true, 1e9, 1e9)).isTrue();
        assertThat(SloPolicy.NONE.meets(false, 1, 1)).isFalse();
    }
}
