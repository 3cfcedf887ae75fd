package io.flotilla.bench.planner;

import io.flotilla.bench.workload.BurstyTrace;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code planner-eval azure-sample} and {@code azure-cut}: traces in the Azure LLM inference layout ({@link AzureTraces}). */
final class AzureCommands {

    private AzureCommands() {
    }

    @Command(name = "azure-sample", description = "Write a generated trace in the Azure LLM inference layout (TIMESTAMP,ContextTokens,"
            + "GeneratedTokens): bunched arrivals, heavy-tailed prompts, short outputs. Not data from the real trace.")
    static final class Sample implements Callable<Integer> {
        @Option(names = "--envelope", defaultValue = AzureTraces.SAMPLE_ENVELOPE,
                description = "Rate envelope as trace --phases (default ${DEFAULT-VALUE}).")
        String envelope;
        @Option(names = "--bunch", defaultValue = "3", description = "Mean requests per bunch (default ${DEFAULT-VALUE}).")
        double bunch;
        @Option(names = "--seed", defaultValue = "67", description = "Seed (default ${DEFAULT-VALUE}).")
        long seed;
        @Option(names = "--out", required = true, description = "CSV file to write.")
        Path out;

        @Override
        public Integer call() throws IOException {
            List<BurstyTrace.Phase> phases = BurstyTrace.parsePhases(envelope);
            return write(AzureTraces.sample(phases, bunch, seed), out);
        }
    }

    @Command(name = "azure-cut", description = "A window of a real Azure trace made to fit this cluster: arrivals divided by "
            + "--compress, rows kept with probability --keep, written in the same layout.")
    static final class Cut implements Callable<Integer> {
        @Option(names = "--in", required = true, description = "The trace, e.g. AzureLLMInferenceTrace_code.csv.")
        Path in;
        @Option(names = "--from", defaultValue = "0", description = "Seconds into the trace where the window starts (default ${DEFAULT-VALUE}).")
        double from;
        @Option(names = "--seconds", defaultValue = "300", description = "Length of the replay in seconds, after compression (default ${DEFAULT-VALUE}).")
        double seconds;
        @Option(names = "--compress", defaultValue = "1", description = "Divide trace time by this (default ${DEFAULT-VALUE}).")
        double compress;
        @Option(names = "--keep", defaultValue = "1", description = "Keep each row with this probability (default ${DEFAULT-VALUE}).")
        double keep;
        @Option(names = "--seed", defaultValue = "67", description = "Seed of the thinning (default ${DEFAULT-VALUE}).")
        long seed;
        @Option(names = "--out", required = true, description = "CSV file to write.")
        Path out;

        @Override
        public Integer call() throws IOException {
            System.out.printf(Locale.ROOT, "%s from %.0f s: %.0f s of trace time in %.0f s, rate × %.3g%n", in, from, seconds * compress,
                    seconds, keep * compress);
            return write(AzureTraces.cut(in, from, seconds, compress, keep, seed), out);
        }
    }

    private static int write(List<AzureTraces.Row> rows, Path out) throws IOException {
        try (Writer w = Files.newBufferedWriter(out, StandardCharsets.UTF_8)) {
            AzureTraces.write(rows, w);
        }
        double seconds = rows.isEmpty() ? 0 : rows.get(rows.size() - 1).arrivalMs() / 1000;
        double isl = rows.stream().mapToInt(AzureTraces.Row::contextTokens).average().orElse(0);
        double osl = rows.stream().mapToInt(AzureTraces.Row::generatedTokens).average().orElse(0);
        System.out.printf(Locale.ROOT, "%d requests over %.0f s (mean %.2f req/s, busiest 30 s %.2f req/s), mean ISL %.0f, OSL %.0f → %s%n",
                rows.size(), seconds, seconds > 0 ? rows.size() / seconds : 0, AzureTraces.peakRate(rows, 30), isl, osl, out);
        return 0;
    }
}
