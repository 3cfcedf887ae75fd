package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.protocol.Ports;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Flow control and fail-open on the whole local cluster (real Kafka, real gRPC, every service its
 * own JVM): a burst of several times the cluster's capacity completes with no failure when the queue
 * timeout allows it; with two router replicas, one SIGKILLed under a steady load loses no request (the
 * gateway fails over to the other), and both SIGKILLed lose none either — the gateway routes by itself
 * meanwhile ({@code gateway_fallback}) and the routers' answers resume after their restart.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class FlowControlE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** Simulated engines ten times faster than their timing model keep the burst short. */
    private static final double SIM_SPEEDUP = 10.0;

    @RegisterExtension
    static final ClusterExtension cluster = new ClusterExtension("flotilla-e2e-flow-",
            c -> c.up(ClusterSpec.builder().workers(2).simSpeedup(SIM_SPEEDUP).routers(2)
                    .timeout(Duration.ofSeconds(240)).build()));

    private static HttpResponse<String> complete(String prompt, int maxTokens, String queueTimeout) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/completions"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(120))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(JSON.createObjectNode()
                        .put("model", "flotilla-sim").put("prompt", prompt).put("max_tokens", maxTokens).put("ignore_eos", true))));
        if (queueTimeout != null) {
            b.header("x-flotilla-queue-timeout", queueTimeout);
        }
        return ClusterUnderTest.HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    @Test
    @Order(1)
    void aBurstOfSeveralTimesTheCapacityCompletesWithNoFailure() throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.get().routable().size() == 2);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> complete("warm up", 2, null).statusCode() == 200);
        // 80 prompts of 16,384 unique tokens at once. A worker is busy once its queued prefill passes its
        // KV capacity (8,192 blocks × 16 = 131,072 tokens, 8 such prompts), so the two workers take about
        // 16 at a time: the burst is about 5× what the cluster runs at once, and the rest waits.
        Path out = Files.createTempDirectory("flotilla-e2e-burst-");
        int rc = new picocli.CommandLine(new io.flotilla.bench.BenchCli()).execute("--url", "http://127.0.0.1:" + Ports.GATEWAY_HTTP,
                "--groups", "80", "--prompts-per-group", "1", "--prefix-len", "16384", "--suffix-len", "16",
                "--output-len", "8", "--rate", "2000", "--arrival", "constant", "--seed", "11", "--quiet",
                "--queue-timeout", "300s", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode summary = JSON.readTree(out.resolve("summary.json").toFile());
        assertThat(summary.get("requests").asInt()).isEqualTo(80);
        assertThat(summary.get("failed").asInt()).as("failures by code: %s", summary.get("error_codes")).isZero();
        double busy = ClusterUnderTest.metric(Ports.ROUTER_MANAGEMENT, "flotilla_router_busy_total");
        double waited = ClusterUnderTest.metric(Ports.GATEWAY_MANAGEMENT, "flotilla_gateway_flow_wait_seconds_sum");
        System.out.printf("burst: 80 ok, router busy answers %.0f, queue wait p99 %.0f ms, TTFT p99 %.0f ms%n", busy,
                summary.get("queue_ms").get("p99").asDouble(), summary.get("ttft_ms").get("p99").asDouble());
        assertThat(busy + waited).as("the burst exceeded what the cluster runs at once: some requests waited").isPositive();
    }

    @Test
    @Order(2)
    void oneOfTwoRoutersKilledUnderSteadyLoadLosesNoRequest() throws Exception {
        ClusterUnderTest c = cluster.get();
        Map<String, AtomicInteger> outcomes = underSteadyLoad(() -> {
            c.launcher().killRouter(1); // SIGKILL
            Thread.sleep(5000); // steady load on the surviving replica alone
            c.launcher().startRouter(1, Duration.ofSeconds(120));
        });
        System.out.println("one router killed: outcomes " + outcomes);
        assertThat(outcomes.keySet()).as("every request answered 200").allMatch(k -> k.startsWith("200 "));
        assertThat(outcomes.keySet()).as("the surviving router answered").anyMatch(k -> !k.equals("200 gateway_fallback"));
    }

    @Test
    @Order(3)
    void everyRouterKilledUnderSteadyLoadLosesNoRequestAndTheyComeBack() throws Exception {
        ClusterUnderTest c = cluster.get();
        Map<String, AtomicInteger> outcomes = underSteadyLoad(() -> {
            c.launcher().killRouter(0); // SIGKILL, both
            c.launcher().killRouter(1);
            Thread.sleep(5000); // steady load with no router at all
            c.launcher().startRouter(0, Duration.ofSeconds(120));
            c.launcher().startRouter(1, Duration.ofSeconds(120));
            await().atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofSeconds(1)).until(() ->
                    complete("after the restart", 2, null).headers().firstValue("x-flotilla-mode")
                            .filter(m -> !m.equals("gateway_fallback")).isPresent());
        });
        System.out.println("every router killed: outcomes " + outcomes);
        assertThat(outcomes.keySet()).as("every request answered 200").allMatch(k -> k.startsWith("200 "));
        assertThat(outcomes).containsKey("200 gateway_fallback");
        assertThat(ClusterUnderTest.prometheus(Ports.GATEWAY_MANAGEMENT))
                .containsPattern("flotilla_gateway_routed_total\\{[^}]*mode=\"gateway_fallback\"[^}]*} [1-9]");
    }

    interface Drill {
        void run() throws Exception;
    }

    /**
     * Ten requests a second for 3 s, then {@code drill} while they go on, then until every request sent
     * has ended; the outcomes counted by status and (for 200s) the routing mode the gateway reported.
     */
    private static Map<String, AtomicInteger> underSteadyLoad(Drill drill) throws Exception {
        Map<String, AtomicInteger> outcomes = new ConcurrentHashMap<>();
        List<CompletableFuture<Void>> sent = new java.util.concurrent.CopyOnWriteArrayList<>();
        AtomicInteger seq = new AtomicInteger();
        ScheduledExecutorService load = Executors.newScheduledThreadPool(4);
        try {
            load.scheduleAtFixedRate(() -> sent.add(CompletableFuture.runAsync(() -> {
                try {
                    HttpResponse<String> r = complete("steady request " + seq.incrementAndGet(), 16, "60s");
                    String mode = r.headers().firstValue("x-flotilla-mode").orElse("none");
                    outcomes.computeIfAbsent(r.statusCode() + " " + (r.statusCode() == 200 ? mode : r.body()),
                            k -> new AtomicInteger()).incrementAndGet();
                } catch (Exception e) {
                    outcomes.computeIfAbsent("io " + e, k -> new AtomicInteger()).incrementAndGet();
                }
            }, load)), 0, 100, TimeUnit.MILLISECONDS);
            Thread.sleep(3000);
            drill.run();
        } finally {
            load.shutdown();
            load.awaitTermination(10, TimeUnit.SECONDS);
            CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).get(180, TimeUnit.SECONDS);
        }
        return outcomes;
    }
}
