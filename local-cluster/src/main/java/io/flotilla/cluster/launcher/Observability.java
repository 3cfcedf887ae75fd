package io.flotilla.cluster.launcher;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Tracing and log format of the local cluster ({@code bin/flotilla up [--tracing] [--tracing-endpoint URL]
 * [--tracing-sample P] [--json-logs FORMAT]}). Every service gets the same settings; recorded in the cluster state,
 * so workers and routers started later (start-worker, the planner's local connector) trace and log alike.
 *
 * @param zipkinEndpoint where spans go ({@code http://HOST:PORT/api/v2/spans}); empty: tracing off (no export, no
 *                       propagation; the services' default)
 * @param launchZipkin   {@code up} starts a Zipkin server on {@link io.flotilla.cluster.zipkin.ZipkinServer#PORT} and
 *                       the endpoint is its
 * @param sampling       probability that a request is traced, 0 to 1
 * @param jsonLogs       Spring Boot's structured console format ({@code ecs}, {@code logstash}, {@code gelf}); empty:
 *                       plain text
 */
public record Observability(String zipkinEndpoint, boolean launchZipkin, double sampling, String jsonLogs) {

    public static final Observability NONE = new Observability("", false, 1.0, "");
    static final List<String> LOG_FORMATS = List.of("ecs", "logstash", "gelf");

    public Observability {
        zipkinEndpoint = zipkinEndpoint == null ? "" : zipkinEndpoint.strip();
        jsonLogs = jsonLogs == null ? "" : jsonLogs.strip().toLowerCase(Locale.ROOT);
        if (!(sampling >= 0 && sampling <= 1)) {
            throw new LauncherException("--tracing-sample must be between 0 and 1, not " + sampling);
        }
        if (!jsonLogs.isEmpty() && !LOG_FORMATS.contains(jsonLogs)) {
            throw new LauncherException("--json-logs must be one of " + LOG_FORMATS + ", not '" + jsonLogs + "'");
        }
        if (!zipkinEndpoint.isEmpty() && !zipkinEndpoint.matches("https?://.+")) {
            throw new LauncherException("--tracing-endpoint must be an http(s) URL such as "
                    + "http://zipkin:9411/api/v2/spans, not '" + zipkinEndpoint + "'");
        }
    }

    /** Spans to the Zipkin-compatible collector at {@code endpoint} (tests: an in-process one), every request traced. */
    public static Observability tracingTo(String endpoint) {
        return new Observability(endpoint, false, 1.0, "");
    }

    /**
     * From the command line: {@code --tracing} starts a Zipkin server, {@code --tracing-endpoint} uses one that runs;
     * {@code --tracing-sample} without either is refused (it would be accepted and ignored).
     */
    static Observability parse(boolean tracing, String endpoint, Double sample, String jsonLogs) {
        boolean external = endpoint != null && !endpoint.isBlank();
        if (tracing && external) {
            throw new LauncherException("give --tracing (start a Zipkin server) or --tracing-endpoint URL (use a running one), "
                    + "not both");
        }
        if (sample != null && !tracing && !external) {
            throw new LauncherException("--tracing-sample needs --tracing or --tracing-endpoint");
        }
        String url = tracing ? io.flotilla.cluster.zipkin.ZipkinServer.spansUrl(io.flotilla.cluster.zipkin.ZipkinServer.PORT)
                : endpoint;
        return new Observability(url, tracing, sample == null ? 1.0 : sample, jsonLogs);
    }

    public boolean tracing() {
        return !zipkinEndpoint.isEmpty();
    }

    /** {@code spec} with these settings: every Spring Boot service of the cluster gets them. */
    ServiceSpec apply(ServiceSpec spec) {
        List<String> extra = new ArrayList<>();
        if (tracing()) {
            extra.add("--management.tracing.export.enabled=true");
            extra.add("--management.tracing.sampling.probability=" + sampling);
            extra.add("--management.tracing.export.zipkin.endpoint=" + zipkinEndpoint);
            // A request's spans reach the store within a second, not Boot's five (a local cluster is for looking at them).
            extra.add("--management.opentelemetry.tracing.export.schedule-delay=1s");
        }
        if (!jsonLogs.isEmpty()) {
            extra.add("--logging.structured.format.console=" + jsonLogs);
        }
        return extra.isEmpty() ? spec : spec.withExtraArgs(extra);
    }

    void save(ClusterState state) {
        state.setLayout("tracing-endpoint", zipkinEndpoint);
        state.setLayout("tracing-launched", Boolean.toString(launchZipkin));
        state.setLayout("tracing-sample", Double.toString(sampling));
        state.setLayout("json-logs", jsonLogs);
    }

    static Observability load(ClusterState state) {
        return new Observability(state.layout("tracing-endpoint", ""),
                Boolean.parseBoolean(state.layout("tracing-launched", "false")),
                Double.parseDouble(state.layout("tracing-sample", "1.0")), state.layout("json-logs", ""));
    }
}
