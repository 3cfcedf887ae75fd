package io.flotilla.bench;

import io.flotilla.bench.workload.ArrivalProcess;
import io.flotilla.bench.workload.SessionWorkload;
import io.flotilla.bench.workload.SharedPrefixWorkload;
import io.flotilla.bench.workload.TokenExpander;
import io.flotilla.bench.workload.TraceReader;
import io.flotilla.bench.workload.TraceWorkload;
import io.flotilla.bench.workload.Workload;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/** Which requests to send: exactly one of {@code --trace}, {@code --groups}, {@code --sessions}. */
public final class WorkloadOptions {

    @Option(names = "--trace", paramLabel = "FILE",
            description = "Replay a trace: Mooncake JSONL (timestamp ms, input_length, output_length, hash_ids) or Azure "
                    + "LLM inference CSV (TIMESTAMP,ContextTokens,GeneratedTokens).")
    Path trace;

    @Option(names = "--trace-format", defaultValue = "auto", paramLabel = "auto|mooncake|azure",
            description = "Trace format; auto = JSONL when the file starts with '{', CSV otherwise (default: ${DEFAULT-VALUE}).")
    String traceFormat;

    @Option(names = "--trace-block-size", defaultValue = "512", description = "Tokens per Mooncake hash id (default: ${DEFAULT-VALUE}).")
    int traceBlockSize;

    @Option(names = "--csv-time-unit", defaultValue = "s", paramLabel = "s|ms",
            description = "Unit of numeric CSV timestamps (date-times need none; default: ${DEFAULT-VALUE}).")
    String csvTimeUnit;

    @Option(names = "--groups", description = "Synthetic shared-prefix workload: number of prefix groups.")
    Integer groups;

    @Option(names = "--prompts-per-group", defaultValue = "8", description = "Prompts per group (default: ${DEFAULT-VALUE}).")
    int promptsPerGroup;

    @Option(names = "--prefix-len", defaultValue = "1024",
            description = "Shared prefix tokens per group; for sessions, the first turn's context (default: ${DEFAULT-VALUE}).")
    int prefixLen;

    @Option(names = "--suffix-len", defaultValue = "64",
            description = "Unique tokens per prompt; for sessions, new user tokens per turn (default: ${DEFAULT-VALUE}).")
    int suffixLen;

    @Option(names = "--output-len", defaultValue = "64", description = "Tokens to generate per synthetic request (default: ${DEFAULT-VALUE}).")
    int outputLen;

    @Option(names = "--sessions", description = "Synthetic multi-turn workload: number of sessions.")
    Integer sessions;

    @Option(names = "--turns", defaultValue = "4", description = "Turns per session (default: ${DEFAULT-VALUE}).")
    int turns;

    @Option(names = "--think-time-ms", defaultValue = "1000",
            description = "Pause between a turn's end and the next turn (default: ${DEFAULT-VALUE}).")
    double thinkTimeMs;

    @Option(names = "--rate", defaultValue = "10",
            description = "Synthetic arrivals per second (prompts, or session starts; default: ${DEFAULT-VALUE}).")
    double rate;

    @Option(names = "--arrival", defaultValue = "poisson", paramLabel = "poisson|bursty|constant",
            description = "Synthetic arrival process (default: ${DEFAULT-VALUE}). bursty = Poisson during ON windows of "
                    + "--burst-on-ms, nothing during OFF windows of --burst-off-ms, same average rate.")
    String arrival;

    @Option(names = "--burst-on-ms", defaultValue = "1000", description = "Bursty ON window (default: ${DEFAULT-VALUE}).")
    double burstOnMs;

    @Option(names = "--burst-off-ms", defaultValue = "4000", description = "Bursty OFF window (default: ${DEFAULT-VALUE}).")
    double burstOffMs;

    @Option(names = "--load-factor", defaultValue = "1",
            description = "Multiply the synthetic arrival rate (--rate) by X: with --rate at the cluster's capacity, "
                    + "1, 2 and 4 give 1×, 2× and 4× capacity (default: ${DEFAULT-VALUE}).")
    double loadFactor;

    @Option(names = "--vocab-size", defaultValue = "100000",
            description = "Token ids are drawn from [0, N) (default: ${DEFAULT-VALUE}; changing it changes every prompt).")
    int vocabSize;

    /** Builds the chosen workload; fails with a message naming the options when the choice is unclear. */
    public Workload build(long seed) {
        int chosen = (trace != null ? 1 : 0) + (groups != null ? 1 : 0) + (sessions != null ? 1 : 0);
        if (chosen != 1) {
            throw new IllegalArgumentException("choose exactly one workload: --trace FILE, --groups N (shared-prefix) "
                    + "or --sessions N (multi-turn)");
        }
        TokenExpander expander = new TokenExpander(vocabSize);
        if (trace != null) {
            if (!Files.isReadable(trace)) {
                throw new IllegalArgumentException("cannot read trace file " + trace);
            }
            double unitMs = switch (csvTimeUnit.toLowerCase(Locale.ROOT)) {
                case "s" -> 1000.0;
                case "ms" -> 1.0;
                default -> throw new IllegalArgumentException("--csv-time-unit must be s or ms");
            };
            return TraceWorkload.open(trace, TraceReader.Format.valueOf(traceFormat.toUpperCase(Locale.ROOT)), unitMs,
                    expander, traceBlockSize, seed);
        }
        if (!(loadFactor > 0)) {
            throw new IllegalArgumentException("--load-factor must be positive");
        }
        ArrivalProcess arrivals = new ArrivalProcess(ArrivalProcess.Kind.parse(arrival), rate * loadFactor, burstOnMs,
                burstOffMs, seed);
        if (groups != null) {
            return new SharedPrefixWorkload(expander, groups, promptsPerGroup, prefixLen, suffixLen, outputLen, arrivals, seed);
        }
        return new SessionWorkload(expander, sessions, turns, prefixLen, suffixLen, outputLen, thinkTimeMs, arrivals, seed);
    }
}
