package io.flotilla.bench;

import io.flotilla.bench.run.RunConfig;
import io.flotilla.bench.stats.SloPolicy;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.Locale;

/** Where to send, how hard, and where the reports go. */
public final class RunOptions {

    @Option(names = "--url", defaultValue = "http://localhost:8000", description = "Gateway base URL (default: ${DEFAULT-VALUE}).")
    String url;

    @Option(names = "--model", description = "Model name (default: the first model of GET {url}/v1/models).")
    String model;

    @Option(names = "--api-key", description = "Sent as 'Authorization: Bearer <key>'.")
    String apiKey;

    @Option(names = "--out", paramLabel = "DIR",
            description = "Report directory (default: .flotilla/bench/<yyyyMMdd-HHmmss>).")
    Path out;

    @Option(names = "--speedup", defaultValue = "1", description = "Divide trace time (arrivals, think times) by X (default: ${DEFAULT-VALUE}).")
    double speedup;

    @Option(names = "--max-requests", defaultValue = "0", description = "Stop after N requests; 0 = all (default: ${DEFAULT-VALUE}).")
    long maxRequests;

    @Option(names = "--duration", converter = DurationConverter.class,
            description = "Stop sending after this long: 90, 90s, 5m, 1h, 500ms or ISO PT5M (default: until the workload ends).")
    Duration duration;

    @Option(names = "--concurrency", defaultValue = "0",
            description = "Most requests in flight; later arrivals wait (0 = no cap; default: ${DEFAULT-VALUE}).")
    int concurrency;

    @Option(names = "--slo-ttft-ms", description = "TTFT objective for SLO attainment and goodput.")
    Double sloTtftMs;

    @Option(names = "--slo-itl-ms", description = "Mean inter-token latency objective for SLO attainment and goodput.")
    Double sloItlMs;

    @Option(names = "--seed", defaultValue = "42", description = "Seed of synthetic prompts and arrivals (default: ${DEFAULT-VALUE}).")
    long seed;

    @Option(names = "--block-size", defaultValue = "16", description = "Serving KV block size for the oracle hit rate (default: ${DEFAULT-VALUE}).")
    int blockSize;

    @Option(names = "--router-url", defaultValue = "http://localhost:8082",
            description = "Router management URL; the mode is read from /actuator/router (default: ${DEFAULT-VALUE}).")
    String routerUrl;

    @Option(names = "--router-grpc", defaultValue = "localhost:7001",
            description = "Router gRPC address: workers are listed there (compare clears their caches; every run reads their "
                    + "per-tier KV hits; default: ${DEFAULT-VALUE}).")
    String routerGrpc;

    @Option(names = "--gateway-management-url", defaultValue = "http://localhost:8081",
            description = "Gateway management URL: every run reads the predicted-vs-actual overlap counts from its "
                    + "/actuator/prometheus (default: ${DEFAULT-VALUE}).")
    String gatewayManagementUrl;

    @Option(names = "--launcher-state", defaultValue = ".flotilla/cluster.properties",
            description = "The local launcher's state: the workers' pids (their CPU time per run) and management ports "
                    + "(default: ${DEFAULT-VALUE}).")
    Path launcherState;

    @Option(names = "--oracle-lru-blocks", defaultValue = "0",
            description = "Capacity of the same-capacity LRU reference in blocks; 0 = every worker's device, host and disk "
                    + "tiers together, as the workers report them (default: ${DEFAULT-VALUE}).")
    long lruBlocks;

    @Option(names = "--request-timeout", defaultValue = "600s", converter = DurationConverter.class,
            description = "Give up on one request after this long (default: ${DEFAULT-VALUE}).")
    Duration requestTimeout;

    @Option(names = "--warmup", defaultValue = "0",
            description = "Unmeasured requests (32 unique tokens, 4 output tokens) sent before measuring, so JIT and "
                    + "connection set-up do not bias the first run; with compare they go before the first cache clear "
                    + "(default: ${DEFAULT-VALUE}).")
    int warmup;

    @Option(names = "--quiet", description = "No progress line.")
    boolean quiet;

    @Option(names = "--queue-timeout", converter = DurationConverter.class,
            description = "Longest wait in the gateway's queue for capacity, sent as x-flotilla-queue-timeout: 300s, 500ms, "
                    + "0 (never wait; the queue off) (default: the gateway's, 30 s unless configured).")
    Duration queueTimeout;

    @Option(names = "--priority", paramLabel = "BAND[:SHARE],…",
            description = "Sent as x-flotilla-priority: one band (interactive, standard, batch) or a mix with shares, "
                    + "e.g. interactive:1,batch:3 (each request draws its band, seeded).")
    String priority;

    @Option(names = "--tenants", paramLabel = "NAME:SHARE[:APIKEY],…",
            description = "Requests come from these tenants in these shares, e.g. a:10,b:1 (sent as \"user\"; with an "
                    + "API key also as Authorization: Bearer, so a gateway with keys sees each as its own flow).")
    String tenants;

    RunConfig config() {
        return new RunConfig(maxRequests, duration, concurrency, speedup, blockSize, Duration.ofSeconds(5));
    }

    /** Each request's tenant and band, drawn from --tenants and --priority with the seed. */
    io.flotilla.bench.run.RequestLabels.Labeler labeler() {
        var t = tenants == null ? java.util.List.<io.flotilla.bench.run.RequestLabels.Share>of()
                : io.flotilla.bench.run.RequestLabels.parse("--tenants", tenants, true);
        var p = priority == null ? java.util.List.<io.flotilla.bench.run.RequestLabels.Share>of()
                : io.flotilla.bench.run.RequestLabels.parse("--priority", priority, false);
        for (var share : p) {
            if (!java.util.Set.of("interactive", "standard", "batch").contains(share.name())) {
                throw new IllegalArgumentException("--priority: '" + share.name() + "' is not interactive, standard or batch");
            }
        }
        return io.flotilla.bench.run.RequestLabels.labeler(t, p, seed);
    }

    SloPolicy slo() {
        return new SloPolicy(sloTtftMs, sloItlMs);
    }

    Path outDir() {
        return out != null ? out
                : Path.of(".flotilla", "bench", LocalDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")));
    }

    /** Accepts a bare number of seconds, a number with ms/s/m/h, or an ISO-8601 duration. */
    public static final class DurationConverter implements ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            if (v.startsWith("p")) {
                return Duration.parse(value.trim().toUpperCase(Locale.ROOT));
            }
            double unitMs;
            String number;
            if (v.endsWith("ms")) {
                unitMs = 1;
                number = v.substring(0, v.length() - 2);
            } else if (v.endsWith("s")) {
                unitMs = 1000;
                number = v.substring(0, v.length() - 1);
            } else if (v.endsWith("m")) {
                unitMs = 60_000;
                number = v.substring(0, v.length() - 1);
            } else if (v.endsWith("h")) {
                unitMs = 3_600_000;
                number = v.substring(0, v.length() - 1);
            } else {
                unitMs = 1000;
                number = v;
            }
            double ms = Double.parseDouble(number.trim()) * unitMs;
            if (ms < 0) {
                throw new IllegalArgumentException("negative duration " + value);
            }
            return Duration.ofNanos(Math.round(ms * 1e6));
        }
    }
}
