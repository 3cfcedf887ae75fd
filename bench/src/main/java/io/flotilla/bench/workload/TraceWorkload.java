package io.flotilla.bench.workload;

import java.nio.file.Path;

/**
 * Replays a trace file at its own timestamps. Mooncake rows expand their {@code hash_ids}
 * ({@link TokenExpander#expandTrace}); Azure CSV rows get unique prompts from the stream of
 * {@code derive(TAG_CSV_ROW, seed, row)}. Token ids are produced only when a request is sent. Rows with
 * {@code input_length 0} send one token and rows with {@code output_length 0} ask for one token, since
 * an OpenAI completion needs both.
 */
public final class TraceWorkload implements Workload {

    private final TraceReader reader;
    private final TokenExpander expander;
    private final int traceBlockTokens;
    private final long seed;
    private final String description;

    public TraceWorkload(TraceReader reader, TokenExpander expander, int traceBlockTokens, long seed, String description) {
        if (traceBlockTokens < 1) {
            throw new IllegalArgumentException("--trace-block-size must be positive, got " + traceBlockTokens);
        }
        this.reader = reader;
        this.expander = expander;
        this.traceBlockTokens = traceBlockTokens;
        this.seed = seed;
        this.description = description;
    }

    public static TraceWorkload open(Path file, TraceReader.Format format, double csvNumberUnitMs,
                                     TokenExpander expander, int traceBlockTokens, long seed) {
        TraceReader reader = TraceReader.open(file, format, csvNumberUnitMs);
        return new TraceWorkload(reader, expander, traceBlockTokens, seed,
                "trace " + file.getFileName() + " (" + format.name().toLowerCase() + ", trace block " + traceBlockTokens + ")");
    }

    @Override
    public PlannedRequest next() {
        if (!reader.hasNext()) {
            return null;
        }
        TraceRow row = reader.next();
        int length = Math.max(1, row.inputLength());
        Prompt prompt = row.hashIds() != null
                ? Prompt.lazy(length, () -> expander.expandTrace(row.hashIds(), traceBlockTokens, length, row.row()))
                : Prompt.lazy(length, () -> expander.tokens(TokenExpander.derive(TokenExpander.TAG_CSV_ROW, seed, row.row()), length));
        return PlannedRequest.single(row.arrivalMs(), prompt, Math.max(1, row.outputLength()));
    }

    @Override
    public String describe() {
        return description;
    }

    @Override
    public void close() {
        reader.close();
    }
}
