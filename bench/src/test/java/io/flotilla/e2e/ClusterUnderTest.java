package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import io.flotilla.cluster.launcher.LocalCluster;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.gateway.sdk.NodeSdk;
import io.flotilla.gateway.sdk.SdkExamples;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerInfo;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Assumptions;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A local cluster started for one end-to-end test class (every service its own JVM from its exec
 * jar, on the fixed ports), a channel to its router, and the probes the tests share. Closing it
 * stops every process and checks that none is left.
 */
final class ClusterUnderTest implements AutoCloseable {

    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

    /** Starts the services on a launcher whose state lives in a fresh temporary directory. */
    interface Up {
        List<RunningService> up(LocalCluster cluster) throws Exception;
    }

    private final LocalCluster cluster;
    private final List<RunningService> started;
    private final ManagedChannel router;

    private ClusterUnderTest(LocalCluster cluster, List<RunningService> started) {
        this.cluster = cluster;
        this.started = started;
        this.router = NettyChannelBuilder.forAddress("127.0.0.1", Ports.ROUTER_GRPC).usePlaintext().build();
    }

    /** @param state the launcher's state directory ({@code .flotilla} of a real checkout) */
    static ClusterUnderTest start(Path state, Up up) throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        LocalCluster cluster = new LocalCluster(root, state, System.out);
        return new ClusterUnderTest(cluster, up.up(cluster));
    }

    /**
     * Starts the cluster as a user does, through the launcher's own command line ({@code bin/flotilla up -d ARGS}),
     * with its state in a fresh temporary directory.
     */
    static ClusterUnderTest startWithLauncher(String stateDirPrefix, String... upArgs) throws Exception {
        Path state = Files.createTempDirectory(stateDirPrefix);
        return start(state, launcher -> {
            String home = System.getProperty("flotilla.home");
            String stateDir = System.getProperty("flotilla.state-dir");
            System.setProperty("flotilla.home", Path.of("").toAbsolutePath().getParent().toString());
            System.setProperty("flotilla.state-dir", state.toString());
            try {
                String[] args = new String[upArgs.length + 2];
                args[0] = "up";
                args[1] = "-d";
                System.arraycopy(upArgs, 0, args, 2, upArgs.length);
                int exit = io.flotilla.cluster.launcher.FlotillaCli.execute(args);
                assertThat(exit).as("bin/flotilla up's exit status (logs in %s/logs)", state).isZero();
                return launcher.status();
            } finally {
                restore("flotilla.home", home);
                restore("flotilla.state-dir", stateDir);
            }
        });
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    static ClusterUnderTest start(String stateDirPrefix, Up up) throws Exception {
        return start(Files.createTempDirectory(stateDirPrefix), up);
    }

    List<RunningService> started() {
        return started;
    }

    LocalCluster launcher() {
        return cluster;
    }

    ManagedChannel routerChannel() {
        return router;
    }

    /** Workers the router would route to now. */
    List<WorkerInfo> routable() {
        return RouterServiceGrpc.newBlockingStub(router).listWorkers(ListWorkersRequest.getDefaultInstance())
                .getWorkersList().stream().filter(WorkerInfo::getRoutable).toList();
    }

    /** The official Java SDK on the cluster's gateway, validating every response strictly. */
    static OpenAIClient sdkClient() {
        return OpenAIOkHttpClient.builder().baseUrl("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1")
                .apiKey("unused").maxRetries(0).responseValidation(true).build();
    }

    /**
     * The Node SDK's helper examples ({@code runTools}, {@code stream()}, {@code parse()}, logprobs, n) against
     * the cluster's gateway serving {@code model}; skipped where node or npm is missing.
     */
    static void runNodeSdkExamples(String model) throws Exception {
        Assumptions.assumeTrue(NodeSdk.available(), "node or npm is not on PATH");
        NodeSdk.Result run = NodeSdk.run(Path.of("../gateway-service/src/test/node"), Path.of("target/node-client"),
                List.of(NodeSdk.EXAMPLES), Map.of("GATEWAY_BASE_URL", "http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1",
                        "MODEL", model, "SDK_EXAMPLES", SdkExamples.nodeEnvironment()));
        assertThat(run.passed()).as("node --test %s failed:%n%s", NodeSdk.EXAMPLES, run.output()).isTrue();
    }

    /** The sum of worker {@code workerId}'s Prometheus samples named {@code name} (any labels); 0 when absent. */
    static double workerMetric(String workerId, String name) throws Exception {
        return metric(Ports.workerManagement(Integer.parseInt(workerId.substring("worker-".length()))), name);
    }

    /** Leading blocks of {@code hashes} the indexer holds for {@code worker}, in {@code model}'s 16-token blocks. */
    static int matchedBlocks(ManagedChannel indexer, String model, String worker, long[] hashes) {
        io.flotilla.protocol.v1.FindMatchesRequest.Builder r = io.flotilla.protocol.v1.FindMatchesRequest.newBuilder()
                .setModel(model).setBlockSize(16);
        java.util.Arrays.stream(hashes).forEach(r::addSeqHashes);
        return io.flotilla.protocol.v1.IndexerServiceGrpc.newBlockingStub(indexer)
                .withDeadlineAfter(5, java.util.concurrent.TimeUnit.SECONDS).findMatches(r.build())
                .getMatchesList().stream().filter(m -> m.getWorkerId().equals(worker))
                .mapToInt(io.flotilla.protocol.v1.WorkerMatch::getMatchedBlocks).findFirst().orElse(0);
    }

    /**
     * Waits until the router holds no sequence and every worker reported itself idle: the next Route is then
     * decided by the cache alone, not by a previous request's booking whose release is still in flight (a
     * booked request on the cached worker can outweigh a small prefix's saving, as the router should).
     */
    static void awaitRouterIdle() {
        ObjectMapper json = new ObjectMapper();
        await("the router idle").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100))
                .until(() -> {
                    JsonNode router = json.readTree(get("http://127.0.0.1:" + Ports.ROUTER_MANAGEMENT + "/actuator/router"));
                    if (router.path("active_sequences").asInt(-1) != 0) {
                        return false;
                    }
                    for (JsonNode w : router.path("workers")) {
                        if (w.path("running").asInt(-1) != 0 || w.path("waiting").asInt(-1) != 0
                                || w.path("booked_blocks").asInt(-1) != 0) {
                            return false;
                        }
                    }
                    return true;
                });
    }

    /** The sum of the Prometheus samples named {@code name} (any labels) on a management port; 0 when absent. */
    static double metric(int managementPort, String name) throws Exception {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "(\\{[^}]*})? (\\S+)$")
                .matcher(prometheus(managementPort));
        double sum = 0;
        while (m.find()) {
            sum += Double.parseDouble(m.group(2));
        }
        return sum;
    }

    static String prometheus(int managementPort) throws Exception {
        return get("http://127.0.0.1:" + managementPort + "/actuator/prometheus");
    }

    /** The body of a GET (10 s at most). */
    /** The command line of process {@code pid} from {@code /proc}; empty where there is no readable /proc. */
    static java.util.Optional<List<String>> commandLine(long pid) throws java.io.IOException {
        Path cmdline = Path.of("/proc", Long.toString(pid), "cmdline");
        if (!java.nio.file.Files.isReadable(cmdline)) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of(List.of(java.nio.file.Files.readString(cmdline).split("\0")));
    }

    static String get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    @Override
    public void close() {
        router.shutdownNow();
        cluster.down(Duration.ofSeconds(20));
        assertThat(started).noneMatch(RunningService::alive);
    }
}
