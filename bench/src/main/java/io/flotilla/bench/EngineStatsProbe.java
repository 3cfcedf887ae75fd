package io.flotilla.bench;

import io.flotilla.bench.client.ClusterAdmin;
import io.flotilla.protocol.metrics.PrometheusText;
import io.flotilla.bench.client.RouterAdmin;
import io.flotilla.bench.run.EngineCounts;
import io.flotilla.protocol.Ports;

import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Counters of the gateway and the workers around one run, for what the client cannot see: how often the
 * router's predicted overlap matched the worker's cached tokens (the gateway's
 * {@code flotilla_gateway_overlap_predictions_total}), what the engines reused and evaluated by their own count
 * (llama.cpp workers' {@code flotilla_worker_llama_*}), and the worker processes' CPU time ({@code ProcessHandle}'s
 * total CPU time, for workers the local launcher started on this machine). Workers are listed by the router; a worker's
 * management port and pid come from the launcher's state file when it names the worker, else the port from the
 * local layout ({@link Ports}: management = 8100 + n for gRPC 7100 + n). Only workers read both before and after
 * count. Whatever cannot be read is NaN (reported once on {@code err}), never a failed run.
 */
final class EngineStatsProbe {

    private static final Duration TIMEOUT = Duration.ofSeconds(3);

    private final Snapshot before;
    private final Settings settings;

    /** Where to read: the gateway's management URL, the router, the launcher's state file, the model. */
    record Settings(String gatewayManagementUrl, String routerUrl, String routerGrpc, Path launcherState, String model) {
    }

    /** One reading: the gateway's three counts and, per worker, {checks, disagree, reused, evaluated, cpu ms}. */
    record Snapshot(double exact, double over, double under, Map<String, double[]> workers) {
    }

    private EngineStatsProbe(Settings settings, Snapshot before) {
        this.settings = settings;
        this.before = before;
    }

    static EngineStatsProbe read(Settings settings, PrintStream err) {
        return new EngineStatsProbe(settings, snapshot(settings, err));
    }

    /** The counts since {@link #read}. */
    EngineCounts since(PrintStream err) {
        return difference(before, snapshot(settings, err));
    }

    /** {@code after − before}; the workers' sums over workers read both times, NaN when there is none. */
    static EngineCounts difference(Snapshot before, Snapshot after) {
        double[] w = new double[5];
        boolean any = false;
        for (Map.Entry<String, double[]> e : after.workers().entrySet()) {
            double[] b = before.workers().get(e.getKey());
            if (b == null) {
                continue;
            }
            any = true;
            for (int i = 0; i < w.length; i++) {
                w[i] += e.getValue()[i] - b[i];
            }
        }
        if (!any) {
            java.util.Arrays.fill(w, Double.NaN);
        }
        return new EngineCounts(after.exact() - before.exact(), after.over() - before.over(), after.under() - before.under(),
                w[0], w[1], w[2], w[3], w[4]);
    }

    private static Snapshot snapshot(Settings s, PrintStream err) {
        HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(TIMEOUT).build();
        double[] gateway = {Double.NaN, Double.NaN, Double.NaN};
        try {
            PrometheusText g = PrometheusText.parse(get(http, s.gatewayManagementUrl() + "/actuator/prometheus"));
            String[] results = {"exact", "over", "under"};
            for (int i = 0; i < 3; i++) {
                double v = g.sum("flotilla_gateway_overlap_predictions_total", Map.of("model", s.model(), "result", results[i]));
                gateway[i] = Double.isNaN(v) ? 0 : v; // a result not seen yet has no sample
            }
        } catch (IOException | RuntimeException e) {
            err.println("bench: cannot read the gateway's counters at " + s.gatewayManagementUrl() + " (" + e.getMessage()
                    + "); no predicted-vs-actual overlap");
        }
        Map<String, double[]> workers = new HashMap<>();
        Properties state = launcherState(s.launcherState());
        try (ClusterAdmin admin = new RouterAdmin(s.routerUrl(), s.routerGrpc())) {
            for (ClusterAdmin.Worker w : admin.workers()) {
                double[] v = worker(http, w, state, err);
                if (v != null) {
                    workers.put(w.id(), v);
                }
            }
        } catch (RuntimeException e) {
            err.println("bench: cannot list the workers (" + e.getMessage() + "); no engine counts or worker CPU");
        }
        return new Snapshot(gateway[0], gateway[1], gateway[2], workers);
    }

    /**
     * Worker {@code id}'s management port: the launcher's record of it, else the launcher's plan from its gRPC
     * port (7100+n → 8100+n); empty when the gRPC port is outside that plan (a fleet's workers bind free ports and
     * share their JVM's management port).
     */
    static java.util.OptionalInt managementPort(String id, String endpoint, Properties state) {
        String mgmt = state.getProperty(id + ".mgmt");
        if (mgmt != null && !mgmt.equals("0")) {
            return java.util.OptionalInt.of(Integer.parseInt(mgmt));
        }
        int grpc = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
        if (grpc < Ports.WORKER_GRPC_BASE || grpc >= Ports.WORKER_TRANSFER_BASE) {
            return java.util.OptionalInt.empty();
        }
        return java.util.OptionalInt.of(Ports.workerManagement(grpc - Ports.WORKER_GRPC_BASE));
    }

    /** {checks, disagree, reused, evaluated, cpu ms} of one worker, or null when it has no llama.cpp counters. */
    private static double[] worker(HttpClient http, ClusterAdmin.Worker w, Properties state, PrintStream err) {
        java.util.OptionalInt known = managementPort(w.id(), w.endpoint(), state);
        if (known.isEmpty()) {
            return null; // a fleet's worker (a simulated engine, no llama.cpp counters): its port says nothing
        }
        int port = known.getAsInt();
        String host = w.endpoint().substring(0, w.endpoint().lastIndexOf(':'));
        PrometheusText m;
        try {
            m = PrometheusText.parse(get(http, "http://" + host + ":" + port + "/actuator/prometheus"));
        } catch (IOException | RuntimeException e) {
            err.println("bench: cannot read " + w.id() + "'s counters on port " + port + " (" + e.getMessage() + ")");
            return null;
        }
        double agree = m.sum("flotilla_worker_llama_mirror_checks_total", Map.of("result", "agree"));
        if (Double.isNaN(agree)) {
            return null; // not a llama.cpp worker
        }
        double disagree = m.sum("flotilla_worker_llama_mirror_checks_total", Map.of("result", "disagree"));
        return new double[] {agree + disagree, disagree, m.sum("flotilla_worker_llama_reused_tokens_total", Map.of()),
                m.sum("flotilla_worker_llama_evaluated_tokens_total", Map.of()), cpuMs(state.getProperty(w.id() + ".pid"))};
    }

    /** CPU time (user + system) of a local process, in ms; NaN when it cannot be read. */
    static double cpuMs(String pid) {
        if (pid == null) {
            return Double.NaN;
        }
        try {
            return ProcessHandle.of(Long.parseLong(pid.trim())).flatMap(h -> h.info().totalCpuDuration())
                    .map(d -> d.toNanos() / 1e6).orElse(Double.NaN);
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    private static Properties launcherState(Path file) {
        Properties p = new Properties();
        if (file != null && Files.isReadable(file)) {
            try (Reader r = Files.newBufferedReader(file)) {
                p.load(r);
            } catch (IOException e) {
                // no pids and no recorded ports: the layout's ports are tried
            }
        }
        return p;
    }

    private static String get(HttpClient http, String url) throws IOException {
        try {
            HttpResponse<String> r = http.send(HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).GET().build(),
                    HttpResponse.BodyHandlers.ofString());
            if (r.statusCode() != 200) {
                throw new IOException("HTTP " + r.statusCode());
            }
            return r.body();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }
}
