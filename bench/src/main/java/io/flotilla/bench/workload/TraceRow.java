package io.flotilla.bench.workload;

/**
 * One request of a trace file.
 *
 * @param row          0-based index among the file's data rows
 * @param arrivalMs    arrival time in milliseconds from the first row (before {@code --speedup})
 * @param inputLength  prompt length in tokens
 * @param outputLength tokens to generate
 * @param hashIds      Mooncake block ids, or {@code null} for a trace whose prompts are all unique (Azure CSV)
 */
public record TraceRow(long row, double arrivalMs, int inputLength, int outputLength, long[] hashIds) {
}
