package io.flotilla.bench.planner;

import io.flotilla.bench.workload.BurstyTrace;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

class TrafficShapesTest {

    @Test
    void theSuiteHasItsShapesAtTheClustersScale() {
        assertThat(TrafficShapes.all().keySet()).containsExactly("single-burst", "two-burst", "recurring-50s", "recurring-100s",
                "diurnal", "slow-ramp", "flash-crowd", "noisy-plateau");
        for (TrafficShapes.Shape s : TrafficShapes.all().values()) {
            assertThat(s.seconds()).as(s.name()).isBetween(280.0, 300.0);
            assertThat(s.peakRate()).as(s.name()).isBetween(6.0, 10.0);
        }
    }

    @Test
    void theOriginalAndTheIssuesTracesAreTheirShapes() {
        assertThat(TrafficShapes.named("single-burst").phases()).isEqualTo(BurstyTrace.parsePhases("40s@0.5,90s@0.5-10,40s@10,10s@10-0.5,100s@0.5"));
        TrafficShapes.Shape two = TrafficShapes.named("two-burst");
        assertThat(two.phases()).isEqualTo(BurstyTrace.parsePhases("30s@1,40s@1-8,40s@8,20s@8-2,50s@2,20s@2-9,30s@9,50s@9-0.5"));
        assertThat(two.seed()).isEqualTo(31);
        assertThat(BurstyTrace.generate(two.phases(), 2000, 64, 0.25, 512, two.seed())).hasSize(1419);
    }

    @Test
    void theDiurnalShapeIsASineAndTheNoisyPlateauStaysInItsBand() {
        TrafficShapes.Shape d = TrafficShapes.named("diurnal");
        assertThat(d.phases()).hasSize(60);
        assertThat(d.phases().get(0).fromRate()).isCloseTo(1, within(1e-9));
        assertThat(d.phases().get(9).toRate()).isCloseTo(9, within(1e-9)); // 50 s in: the peak
        for (BurstyTrace.Phase p : TrafficShapes.named("noisy-plateau").phases()) {
            assertThat(p.toRate()).isBetween(3.0, 7.0);
        }
        assertThatThrownBy(() -> TrafficShapes.named("weekly")).hasMessageContaining("single-burst");
    }
}
