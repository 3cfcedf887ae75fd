package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.LocalCluster;
import io.flotilla.cluster.launcher.PlannerOptions;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.kafka.ProtoDeserializer;
import io.flotilla.protocol.kafka.ProtoProducers;
import io.flotilla.protocol.kafka.TopicTailer;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The planner's {@code local} connector on the whole local cluster ({@code bin/flotilla up --planner
 * local}): a burst beyond one simulated worker makes the planner run {@code bin/flotilla start-worker},
 * the new worker becomes READY and serves; when traffic stops the planner drains it (DRAINING, then
 * STOPPED in membership, its process left alive) and no request fails.
 *
 * <p>The cluster uses the default state directory ({@code <repo>/.flotilla}) because the planner's
 * {@code bin/flotilla start-worker} addresses that one; like every local-cluster test it needs the
 * fixed ports free. Planner timescales are shortened (2 s interval, 8 s idle) so the test fits in about
 * two minutes; the workers are 4× slower than the timing model (sim-speedup 0.25) so that four small
 * requests a second are more than one worker is sized for.
 */
class PlannerLocalConnectorE2ETest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Prompt and output of a burst request: 2 000 uncached tokens in, 32 out. */
    private static final int ISL = 2000;
    private static final int OSL = 32;

    private static LocalCluster cluster;
    private static List<RunningService> started;
    private static TopicTailer<WorkerStatus> membership;
    private static final List<WorkerStatus> statuses = new CopyOnWriteArrayList<>();

    @BeforeAll
    static void up() {
        Path root = Path.of("").toAbsolutePath().getParent();
        cluster = new LocalCluster(root, System.out);
        PlannerOptions planner = PlannerOptions.parse("local", "2s", List.of(
                "cold-start.ready-time=10s", "aggregated.max=2", "scaling.up-cooldown=2s", "scaling.min-hold=4s",
                "scaling.idle-after=8s"));
        started = cluster.up(ClusterSpec.builder().workers(1).simSpeedup(0.25).planner(planner)
                .timeout(Duration.ofSeconds(240)).build());
        membership = new TopicTailer<>("planner-e2e", ProtoProducers.plaintext("127.0.0.1:" + Ports.KAFKA), Topics.WORKERS.name(),
                new ProtoDeserializer.WorkerStatuses(), TopicTailer.Start.EARLIEST, Map.of(),
                TopicTailer.eachValue(statuses::add), Clock.systemUTC()).start();
    }

    @AfterAll
    static void down() {
        if (membership != null) {
            membership.close();
        }
        if (cluster != null) {
            cluster.down(Duration.ofSeconds(20));
            assertThat(started).noneMatch(RunningService::alive);
        }
    }

    @Test
    void aBurstStartsAWorkerThatServesAndQuietDrainsItWithoutFailingARequest() throws Exception {
        assertThat(started).extracting(RunningService::name).contains("planner", "worker-0").doesNotContain("worker-1");
        // The first requests run cold code in four JVMs; the cluster is ready once it serves one.
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500)).until(() -> send(0).get().statusCode() == 200);
        await().atMost(Duration.ofSeconds(10)).until(() -> decisions().size() > 0);
        assertThat(decisions().get(0).get("connector").asText()).isEqualTo("local");
        assertThat(decisions().get(0).get("targets").get("aggregated").asInt()).isEqualTo(1);

        // Burst: 4 requests/s, each 2 000 fresh prompt tokens and 32 output tokens, until the new worker served some.
        List<CompletableFuture<HttpResponse<String>>> sent = new CopyOnWriteArrayList<>();
        ScheduledExecutorService burst = Executors.newSingleThreadScheduledExecutor();
        try {
            long[] seq = {1};
            burst.scheduleAtFixedRate(() -> sent.add(send(seq[0]++)), 0, 250, TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(500))
                    .until(() -> servedBy(sent, "worker-1") >= 3);
        } finally {
            burst.shutdownNow();
        }
        CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(90, TimeUnit.SECONDS);
        for (CompletableFuture<HttpResponse<String>> f : sent) {
            HttpResponse<String> r = f.get();
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            assertThat(JSON.readTree(r.body()).get("usage").get("completion_tokens").asInt()).isEqualTo(OSL);
        }
        JsonNode scaledUp = firstWith(2);
        assertThat(scaledUp).as("a decision with target 2 applied by the local connector").isNotNull();
        assertThat(scaledUp.get("applied").get("aggregated").asInt()).isEqualTo(2);
        assertThat(statesOf("worker-1")).contains(WorkerState.WORKER_STATE_READY);
        System.out.printf("burst: %d requests, %d served by worker-1, all 200%n", sent.size(), servedBy(sent, "worker-1"));

        // Quiet: the planner goes back to one worker by draining worker-1, never by killing it.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> statesOf("worker-1").contains(WorkerState.WORKER_STATE_STOPPED));
        List<WorkerState> states = statesOf("worker-1");
        assertThat(states.indexOf(WorkerState.WORKER_STATE_DRAINING)).as("DRAINING before STOPPED: %s", states)
                .isBetween(0, states.indexOf(WorkerState.WORKER_STATE_STOPPED));
        assertThat(decisions().get(0).get("targets").get("aggregated").asInt()).isEqualTo(1);
        assertThat(statesOf("worker-0")).doesNotContain(WorkerState.WORKER_STATE_DRAINING, WorkerState.WORKER_STATE_STOPPED);
        List<RunningService> worker1 = cluster.status().stream().filter(s -> s.name().equals("worker-1")).toList();
        assertThat(worker1).singleElement()
                .matches(RunningService::alive, "drained, not killed: its process is still alive");
        // The planner started it through start-worker, which compiles as up was told (--worker-jit quick).
        ClusterUnderTest.commandLine(worker1.get(0).pid())
                .ifPresent(args -> assertThat(args).contains("-XX:TieredStopAtLevel=1"));
        HttpResponse<String> after = send(10_000).get(60, TimeUnit.SECONDS);
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.headers().firstValue("x-flotilla-worker")).contains("worker-0");
    }

    /** One non-streaming completion of {@link #ISL} random token ids (seeded by {@code n}, so never cached). */
    private static CompletableFuture<HttpResponse<String>> send(long n) {
        SplittableRandom random = new SplittableRandom(n);
        ObjectNode body = JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", OSL).put("ignore_eos", true);
        ArrayNode prompt = body.putArray("prompt");
        for (int i = 0; i < ISL; i++) {
            prompt.add(random.nextInt(1, 100_000));
        }
        return HTTP.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/completions"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body.toString())).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static long servedBy(List<CompletableFuture<HttpResponse<String>>> sent, String worker) {
        return sent.stream().filter(f -> f.isDone() && !f.isCompletedExceptionally())
                .filter(f -> f.join().headers().firstValue("x-flotilla-worker").filter(worker::equals).isPresent()).count();
    }

    private static List<WorkerState> statesOf(String worker) {
        return statuses.stream().filter(s -> s.getWorkerId().equals(worker)).map(WorkerStatus::getState).distinct().toList();
    }

    /** GET /planner/decisions, newest first. */
    private static JsonNode decisions() throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.PLANNER_HTTP
                + "/planner/decisions")).build(), HttpResponse.BodyHandlers.ofString()).body()).get("decisions");
    }

    private static JsonNode firstWith(int aggregated) throws Exception {
        for (JsonNode d : decisions()) {
            if (d.get("targets").get("aggregated").asInt() == aggregated && d.hasNonNull("applied")) {
                return d;
            }
        }
        return null;
    }
}
