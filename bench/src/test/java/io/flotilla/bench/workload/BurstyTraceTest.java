package io.flotilla.bench.workload;

import org.junit.jupiter.api.Test;

import java.io.StringReader;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BurstyTraceTest {

    @Test
    void phasesParseHoldsAndRamps() {
        assertThat(BurstyTrace.parsePhases("90s@0.5, 45s@0.5-10,1m@10,500ms@0"))
                .containsExactly(new BurstyTrace.Phase(90, 0.5, 0.5), new BurstyTrace.Phase(45, 0.5, 10),
                        new BurstyTrace.Phase(60, 10, 10), new BurstyTrace.Phase(0.5, 0, 0));
        assertThat(new BurstyTrace.Phase(45, 0.5, 10).expectedRequests()).isEqualTo(236.25);
        assertThatThrownBy(() -> BurstyTrace.parsePhases("90s")).hasMessageContaining("DURATION@RATE");
        assertThatThrownBy(() -> BurstyTrace.parsePhases("90s@fast")).hasMessageContaining("rates must be numbers");
        assertThatThrownBy(() -> BurstyTrace.parsePhases("soon@1")).hasMessageContaining("phase duration");
        assertThatThrownBy(() -> BurstyTrace.parsePhases("0s@1")).hasMessageContaining("positive duration");
    }

    @Test
    void theSameSeedGivesTheSameTraceAndAnotherSeedAnother() {
        List<BurstyTrace.Phase> phases = BurstyTrace.parsePhases("20s@1,20s@1-5");
        assertThat(BurstyTrace.generate(phases, 2000, 64, 0.25, 512, 7))
                .isEqualTo(BurstyTrace.generate(phases, 2000, 64, 0.25, 512, 7))
                .isNotEqualTo(BurstyTrace.generate(phases, 2000, 64, 0.25, 512, 8));
    }

    @Test
    void arrivalsFollowThePhaseRatesAndLengthsStayInTheirBand() {
        // 600 s quiet at 1 req/s, 600 s ramping 1 → 9 (mean 5), 600 s at 9: expected 600, 3000, 5400 requests.
        List<BurstyTrace.Phase> phases = BurstyTrace.parsePhases("600s@1,600s@1-9,600s@9");
        List<BurstyTrace.Row> rows = BurstyTrace.generate(phases, 2000, 64, 0.25, 512, 42);
        long quiet = rows.stream().filter(r -> r.timestampMs() < 600_000).count();
        long ramp = rows.stream().filter(r -> r.timestampMs() >= 600_000 && r.timestampMs() < 1_200_000).count();
        long peak = rows.stream().filter(r -> r.timestampMs() >= 1_200_000).count();
        // Poisson counts: within 4 standard deviations (√600 ≈ 24, √3000 ≈ 55, √5400 ≈ 73).
        assertThat(quiet).isBetween(600L - 100, 600L + 100);
        assertThat(ramp).isBetween(3000L - 220, 3000L + 220);
        assertThat(peak).isBetween(5400L - 300, 5400L + 300);
        // The ramp rises: its second half holds more than its first (expected 1800 against 1200).
        long rampFirstHalf = rows.stream().filter(r -> r.timestampMs() >= 600_000 && r.timestampMs() < 900_000).count();
        assertThat(ramp - rampFirstHalf).isGreaterThan(rampFirstHalf + 300);
        assertThat(rows).extracting(BurstyTrace.Row::timestampMs).isSorted();
        assertThat(rows).allSatisfy(r -> {
            assertThat(r.inputLength()).isBetween(1500, 2500);
            assertThat(r.outputLength()).isBetween(48, 80);
            assertThat(r.hashIds()).isEqualTo((r.inputLength() + 511) / 512);
        });
    }

    @Test
    void everyRequestGetsFreshHashIdsAndTheTraceReaderReadsItBack() throws Exception {
        List<BurstyTrace.Row> rows = BurstyTrace.generate(BurstyTrace.parsePhases("30s@2"), 1000, 16, 0, 512, 3);
        StringWriter out = new StringWriter();
        BurstyTrace.write(rows, out);
        List<TraceRow> read = new ArrayList<>();
        try (TraceReader reader = TraceReader.of(new StringReader(out.toString()), "mem", TraceReader.Format.AUTO, 1)) {
            reader.forEachRemaining(read::add);
        }
        assertThat(read).hasSameSizeAs(rows);
        assertThat(read).allSatisfy(r -> {
            assertThat(r.inputLength()).isEqualTo(1000);
            assertThat(r.outputLength()).isEqualTo(16);
            assertThat(r.hashIds()).hasSize(2);
        });
        assertThat(read.stream().flatMapToLong(r -> java.util.Arrays.stream(r.hashIds())).distinct().count())
                .as("no block is shared").isEqualTo(2L * rows.size());
        assertThat(read.get(0).arrivalMs()).isZero(); // the reader makes arrivals relative to the first row
        assertThat(read.get(read.size() - 1).arrivalMs())
                .isEqualTo((double) (rows.get(rows.size() - 1).timestampMs() - rows.get(0).timestampMs()));
    }
}
