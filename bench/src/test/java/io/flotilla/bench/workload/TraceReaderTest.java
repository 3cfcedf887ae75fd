package io.flotilla.bench.workload;

import org.junit.jupiter.api.Test;

import java.io.StringReader;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

class TraceReaderTest {

    /** The shared workload beside the repository: {@code <repo root>/../shared/workloads/…}. */
    static Path sharedTrace() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("docker-compose.yml")) && Files.isRegularFile(dir.resolve("mvnw"))) {
                Path parent = dir.getParent();
                return parent == null ? null : parent.resolve("shared/workloads/mooncake-synthetic-300.jsonl");
            }
        }
        return null;
    }

    static Path sample() {
        try {
            return Path.of(TraceReaderTest.class.getResource("/mooncake-sample.jsonl").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    static List<TraceRow> readAll(Path file) {
        List<TraceRow> rows = new ArrayList<>();
        try (TraceReader r = TraceReader.open(file, TraceReader.Format.AUTO, 1000)) {
            r.forEachRemaining(rows::add);
        }
        return rows;
    }

    @Test
    void readsTheBundledMooncakeSample() {
        List<TraceRow> rows = readAll(sample());

        assertThat(rows).hasSize(20);
        TraceRow first = rows.get(0);
        assertThat(first.arrivalMs()).isZero();
        assertThat(first.inputLength()).isEqualTo(40160);
        assertThat(first.outputLength()).isEqualTo(6);
        assertThat(first.hashIds()).hasSize(79).startsWith(0L, 1L, 2L).endsWith(78L);
        TraceRow sixth = rows.get(5);
        assertThat(sixth.row()).isEqualTo(5);
        assertThat(sixth.arrivalMs()).isEqualTo(529.0);
        assertThat(sixth.inputLength()).isEqualTo(28);
        assertThat(sixth.outputLength()).isEqualTo(445);
        assertThat(sixth.hashIds()).containsExactly(298L);
        assertThat(rows.get(19).arrivalMs()).isEqualTo(4840.0);
        for (TraceRow r : rows) {
            assertThat(r.inputLength()).isLessThanOrEqualTo(512 * r.hashIds().length).isGreaterThan(512 * (r.hashIds().length - 1));
        }
    }

    @Test
    void readsTheFullSharedSampleWhenPresent() {
        Path shared = sharedTrace();
        assumeThat(shared != null && Files.isRegularFile(shared))
                .as("shared workload ../shared/workloads/mooncake-synthetic-300.jsonl beside the repository root not found "
                        + "(CI clones shared/ next to the repo); the bundled 20-line sample is tested instead")
                .isTrue();

        List<TraceRow> rows = readAll(shared);

        assertThat(rows).hasSize(300);
        assertThat(rows.get(299).arrivalMs()).isEqualTo(86790.0);
        assertThat(rows.stream().mapToLong(TraceRow::inputLength).sum()).isEqualTo(3_853_165L);
        assertThat(rows).isSortedAccordingTo((a, b) -> Double.compare(a.arrivalMs(), b.arrivalMs()));
    }

    @Test
    void arrivalsAreRelativeToTheFirstRowAndNeverGoBack() {
        String jsonl = """
                {"timestamp": 1000, "input_length": 3, "output_length": 1, "hash_ids": [7]}

                {"timestamp": 1500, "input_length": 3, "output_length": 2, "hash_ids": [7]}
                {"timestamp": 1200, "input_length": 3, "output_length": 3, "hash_ids": [8]}
                """;
        List<TraceRow> rows = new ArrayList<>();
        TraceReader.of(new StringReader(jsonl), "t", TraceReader.Format.AUTO, 1000).forEachRemaining(rows::add);

        assertThat(rows).extracting(TraceRow::arrivalMs).containsExactly(0.0, 500.0, 500.0);
        assertThat(rows).extracting(TraceRow::row).containsExactly(0L, 1L, 2L);
    }

    @Test
    void malformedRowsNameTheLine() {
        String jsonl = "{\"timestamp\": 0, \"input_length\": 3, \"output_length\": 1, \"hash_ids\": [1]}\n{\"timestamp\": 5}\n";
        TraceReader r = TraceReader.of(new StringReader(jsonl), "bad.jsonl", TraceReader.Format.MOONCAKE, 1000);
        r.next();
        assertThatThrownBy(r::next).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bad.jsonl:2");
    }

    @Test
    void readsTheAzureCsvFormatAsPublished() {
        String csv = """
                TIMESTAMP,ContextTokens,GeneratedTokens
                2023-11-16 18:15:46.6805900,374,44
                2023-11-16 18:15:47.1805900,396,109
                2023-11-16 18:15:50.0000000,879,3
                """;
        List<TraceRow> rows = new ArrayList<>();
        TraceReader.of(new StringReader(csv), "azure.csv", TraceReader.Format.AUTO, 1000).forEachRemaining(rows::add);

        assertThat(rows).hasSize(3);
        assertThat(rows.get(0).arrivalMs()).isZero();
        assertThat(rows.get(1).arrivalMs()).isCloseTo(500.0, org.assertj.core.data.Offset.offset(1e-3));
        assertThat(rows.get(2).arrivalMs()).isCloseTo(3319.41, org.assertj.core.data.Offset.offset(1e-3));
        assertThat(rows.get(1).inputLength()).isEqualTo(396);
        assertThat(rows.get(1).outputLength()).isEqualTo(109);
        assertThat(rows.get(1).hashIds()).isNull();
    }

    @Test
    void azureCsvTakesColumnsInAnyOrderAndNumericOrIsoTimestamps() {
        String numeric = "\uFEFFGeneratedTokens,ContextTokens,TIMESTAMP\n5,10,100.5\n6,20,101.0\n";
        List<TraceRow> rows = new ArrayList<>();
        TraceReader.of(new StringReader(numeric), "n.csv", TraceReader.Format.AUTO, 1000).forEachRemaining(rows::add);
        assertThat(rows).extracting(TraceRow::arrivalMs).containsExactly(0.0, 500.0);
        assertThat(rows).extracting(TraceRow::inputLength).containsExactly(10, 20);

        String iso = "timestamp,contexttokens,generatedtokens\n2024-05-10T00:00:00Z,1,1\n2024-05-10T00:00:01.25Z,1,1\n";
        rows.clear();
        TraceReader.of(new StringReader(iso), "i.csv", TraceReader.Format.AZURE, 1000).forEachRemaining(rows::add);
        assertThat(rows).extracting(TraceRow::arrivalMs).containsExactly(0.0, 1250.0);
    }

    @Test
    void csvWithoutTheTraceColumnsIsRefused() {
        TraceReader r = TraceReader.of(new StringReader("a,b,c\n1,2,3\n"), "x.csv", TraceReader.Format.AUTO, 1000);
        assertThatThrownBy(r::hasNext).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("TIMESTAMP, ContextTokens and GeneratedTokens");
    }
}
