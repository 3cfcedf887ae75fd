package io.flotilla.bench.planner;

import io.flotilla.bench.workload.BurstyTrace;
import io.flotilla.bench.workload.TraceReader;
import io.flotilla.bench.workload.TraceRow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class AzureTracesTest {

    /** The sample shipped for the suite and these tests: bench/src/test/resources/azure-code-sample.csv. */
    private static final Path SHIPPED = Path.of("src/test/resources/azure-code-sample.csv");

    private static List<TraceRow> read(Path file, TraceReader.Format format) {
        List<TraceRow> rows = new ArrayList<>();
        try (TraceReader r = TraceReader.open(file, format, 1000)) {
            r.forEachRemaining(rows::add);
        }
        return rows;
    }

    @Test
    void theShippedSampleIsTheGeneratorsOutputAndNotTheRealTrace() throws Exception {
        StringWriter w = new StringWriter();
        AzureTraces.write(AzureTraces.sample(BurstyTrace.parsePhases(AzureTraces.SAMPLE_ENVELOPE), 3, 67), w);
        assertThat(Files.readString(SHIPPED)).isEqualTo(w.toString());
        assertThat(Files.readAllLines(SHIPPED).get(1)).startsWith("2026-01-01 00:00:");
    }

    @Test
    void theSampleHasTheAzureLayoutAndItsLook() {
        assertThat(read(SHIPPED, TraceReader.Format.AZURE)).isEqualTo(read(SHIPPED, TraceReader.Format.AUTO));
        List<TraceRow> rows = read(SHIPPED, TraceReader.Format.AZURE);
        assertThat(rows).hasSizeBetween(1500, 2200);
        assertThat(rows.get(rows.size() - 1).arrivalMs()).isBetween(280_000.0, 300_000.0);
        assertThat(rows).allMatch(r -> r.inputLength() >= 14 && r.inputLength() <= 7437 && r.outputLength() >= 6
                && r.outputLength() <= 700 && r.hashIds() == null);
        double isl = rows.stream().mapToInt(TraceRow::inputLength).average().orElseThrow();
        double osl = rows.stream().mapToInt(TraceRow::outputLength).average().orElseThrow();
        assertThat(isl).isBetween(1500.0, 2300.0);
        assertThat(osl).isBetween(15.0, 35.0);
        // Bunched: arrivals within 50 ms of the one before are far more common than in a Poisson process along the same envelope.
        List<AzureTraces.Row> poisson = AzureTraces.sample(BurstyTrace.parsePhases(AzureTraces.SAMPLE_ENVELOPE), 1, 67);
        List<AzureTraces.Row> bunched = AzureTraces.sample(BurstyTrace.parsePhases(AzureTraces.SAMPLE_ENVELOPE), 3, 67);
        assertThat(closeGaps(bunched)).isGreaterThan(1.5 * closeGaps(poisson));
    }

    /** The fraction of arrivals less than 50 ms after the one before. */
    private static double closeGaps(List<AzureTraces.Row> rows) {
        long close = 0;
        for (int i = 1; i < rows.size(); i++) {
            close += rows.get(i).arrivalMs() - rows.get(i - 1).arrivalMs() < 50 ? 1 : 0;
        }
        return (double) close / rows.size();
    }

    @Test
    void aCutIsAWindowCompressedAndThinned(@TempDir Path dir) throws Exception {
        Path trace = dir.resolve("trace.csv");
        List<AzureTraces.Row> rows = new ArrayList<>();
        for (int i = 0; i < 1000; i++) {
            rows.add(new AzureTraces.Row(i * 100.0, 100 + i, 10));   // 10 req/s for 100 s
        }
        try (var w = Files.newBufferedWriter(trace)) {
            AzureTraces.write(rows, w);
        }
        List<AzureTraces.Row> cut = AzureTraces.cut(trace, 20, 10, 4, 0.5, 1);
        // 40 s of trace from 20 s in, four times as fast: 400 rows in 10 s, half of them kept.
        assertThat(cut.size()).isBetween(170, 230);
        assertThat(cut).allMatch(r -> r.arrivalMs() >= 0 && r.arrivalMs() < 10_000);
        assertThat(cut.get(0).contextTokens()).isBetween(300, 320);
        assertThat(AzureTraces.cut(trace, 20, 10, 4, 1, 1)).hasSize(400);
        assertThat(AzureTraces.peakRate(AzureTraces.cut(trace, 0, 100, 1, 1, 1), 10)).isCloseTo(10, within(0.11));
    }
}
