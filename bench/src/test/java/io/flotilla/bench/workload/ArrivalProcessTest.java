package io.flotilla.bench.workload;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.data.Offset.offset;

class ArrivalProcessTest {

    @Test
    void constantArrivalsAreEvenlySpacedFromZero() {
        ArrivalProcess p = new ArrivalProcess(ArrivalProcess.Kind.CONSTANT, 4, 0, 0, 1);
        assertThat(new double[] {p.next(), p.next(), p.next()}).containsExactly(0, 250, 500);
    }

    @Test
    void poissonIsDeterministicPerSeedWithTheRequestedMeanRate() {
        double[] a = draw(new ArrivalProcess(ArrivalProcess.Kind.POISSON, 20, 0, 0, 7), 20_000);
        double[] b = draw(new ArrivalProcess(ArrivalProcess.Kind.POISSON, 20, 0, 0, 7), 20_000);
        double[] c = draw(new ArrivalProcess(ArrivalProcess.Kind.POISSON, 20, 0, 0, 8), 20_000);

        assertThat(a).containsExactly(b);
        assertThat(a[0]).isNotEqualTo(c[0]);
        assertThat(a).isSorted();
        // 20 000 arrivals at 20/s take about 1000 s (±3 % is > 4 standard deviations).
        assertThat(a[a.length - 1] / 1000.0).isCloseTo(1000.0, offset(30.0));
    }

    @Test
    void burstyArrivalsFallOnlyInOnWindowsAndKeepTheAverageRate() {
        double on = 1000, off = 4000;
        double[] t = draw(new ArrivalProcess(ArrivalProcess.Kind.BURSTY, 10, on, off, 3), 20_000);

        assertThat(t).isSorted();
        for (double x : t) {
            assertThat(x % (on + off)).as("arrival at %.1f ms", x).isLessThan(on);
        }
        assertThat(t[t.length - 1] / 1000.0).isCloseTo(2000.0, offset(60.0));
    }

    @Test
    void rateMustBePositive() {
        assertThatThrownBy(() -> new ArrivalProcess(ArrivalProcess.Kind.POISSON, 0, 0, 0, 1))
                .hasMessageContaining("--rate");
    }

    private static double[] draw(ArrivalProcess p, int n) {
        double[] t = new double[n];
        for (int i = 0; i < n; i++) {
            t[i] = p.next();
        }
        return t;
    }
}
