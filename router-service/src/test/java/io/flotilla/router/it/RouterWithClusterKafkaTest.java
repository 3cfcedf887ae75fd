package io.flotilla.router.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.indexer.IndexerApplication;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.RoutingMode;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.router.RouterApplication;
import io.flotilla.worker.WorkerApplication;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The router with real workers, a real indexer and a real broker: a repeated prompt goes back to the
 * worker that cached it in kv mode, round-robin spreads it, and the router keeps routing (from its
 * approximate index) when the indexer is gone.
 */
@ExtendWith(KafkaBrokerExtension.class)
class RouterWithClusterKafkaTest {

    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16);

    @Test
    void routesByCacheSwitchesModesAndSurvivesTheIndexer(KafkaBroker kafka, @TempDir Path snapshots) throws Exception {
        String prefix = "rt-" + System.nanoTime() + "-";
        int indexerPort = KafkaBroker.freePort();
        int routerPort = KafkaBroker.freePort();
        int routerMgmt = KafkaBroker.freePort();
        int[] workerPorts = {KafkaBroker.freePort(), KafkaBroker.freePort(), KafkaBroker.freePort()};
        List<ConfigurableApplicationContext> started = new java.util.ArrayList<>();
        ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", routerPort).usePlaintext().build();
        try {
            ConfigurableApplicationContext indexer = start(started, new SpringApplicationBuilder(IndexerApplication.class),
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                    "--flotilla.indexer.grpc-port=" + indexerPort, "--flotilla.indexer.snapshot-dir=" + snapshots);
            List<ConfigurableApplicationContext> workers = new java.util.ArrayList<>();
            for (int i = 0; i < workerPorts.length; i++) {
                workers.add(start(started, new SpringApplicationBuilder(WorkerApplication.class),
                        "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                        "--flotilla.worker.id=" + prefix + i, "--flotilla.worker.grpc-port=" + workerPorts[i],
                        "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.sim.total-blocks=2048",
                        "--flotilla.worker.sim.kv-bytes-per-block=0", "--flotilla.worker.sim.speedup=100"));
            }
            start(started, new SpringApplicationBuilder(RouterApplication.class),
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=" + routerMgmt,
                    "--flotilla.router.grpc-port=" + routerPort, "--flotilla.router.indexer.address=127.0.0.1:" + indexerPort,
                    "--flotilla.router.indexer.deadline.fixed=200ms",
                    // traced, exported nowhere that answers: spans are made, and their ids become exemplars
                    "--management.tracing.export.enabled=true", "--management.tracing.sampling.probability=1.0",
                    "--management.tracing.export.zipkin.endpoint=http://127.0.0.1:" + KafkaBroker.freePort() + "/api/v2/spans",
                    "--logging.level.io.opentelemetry.exporter=off");
            var stub = RouterServiceGrpc.newBlockingStub(channel);
            await().atMost(Duration.ofSeconds(20)).until(() -> ours(stub, prefix).size() == 3);

            int[] prompt = new int[4096];
            Arrays.setAll(prompt, i -> 7 + i);
            RouteDecision first = routeAndServe(stub, "q0", prompt);
            assertThat(first.getModeUsed()).isEqualTo(RoutingMode.ROUTING_MODE_KV);
            // Wait until the indexer saw the worker's blocks, then the same prompt goes back there.
            await().atMost(Duration.ofSeconds(20)).until(() -> route(stub, "probe-" + System.nanoTime(), prompt, true)
                    .getOverlapBlocks() > 0);
            for (int i = 1; i <= 5; i++) {
                RouteDecision d = routeAndServe(stub, "q" + i, prompt);
                assertThat(d.getWorkerId()).isEqualTo(first.getWorkerId());
                assertThat(d.getModeUsed()).isEqualTo(RoutingMode.ROUTING_MODE_KV);
                assertThat(d.getOverlapBlocks()).isEqualTo(256); // every full block of the 4096-token prompt is resident
            }

            post(routerMgmt, "{\"mode\": \"round-robin\"}");
            Set<String> chosen = new HashSet<>();
            for (int i = 0; i < 6; i++) {
                chosen.add(routeAndServe(stub, "rr" + i, prompt).getWorkerId());
            }
            assertThat(chosen).hasSize(3);
            assertThat(get(routerMgmt)).contains("\"mode\":\"round-robin\"").contains("\"state\":\"ready\"");

            post(routerMgmt, "{\"mode\": \"kv\"}");
            assertThat(route(stub, "shorter-than-a-block", new int[]{1, 2, 3}, true).getModeUsed())
                    .as("nothing to look up is the indexer's answer, not a degraded decision")
                    .isEqualTo(RoutingMode.ROUTING_MODE_KV);
            // every call above was traced (sampling 1.0); the histogram keeps a recent one per bucket, rate-limited
            assertThat(openMetrics(routerMgmt).lines().filter(l -> l.startsWith("flotilla_router_decision_seconds_bucket")))
                    .as("traced decisions are exemplars of the latency histogram")
                    .anySatisfy(l -> assertThat(l).containsPattern("# \\{span_id=\"[0-9a-f]{16}\",trace_id=\"[0-9a-f]{32}\"\\}"));
            String metrics = get(routerMgmt, "/actuator/prometheus");
            assertThat(metrics).contains("mode=\"kv\"}")
                    .contains("flotilla_router_decision_seconds_count").contains("flotilla_router_overlap_blocks_count")
                    .contains("flotilla_router_indexer_errors_total");
            // Closing an in-process app disposes Reactor Netty's shared resources: only gRPC from here on.
            indexer.close();
            RouteDecision degraded = route(stub, "after-indexer", prompt, true);
            assertThat(degraded.getModeUsed()).isEqualTo(RoutingMode.ROUTING_MODE_KV_APPROX);
            assertThat(degraded.getWorkerId()).startsWith(prefix);

            // A worker that stops leaves the candidates at once.
            workers.get(2).close();
            await().atMost(Duration.ofSeconds(10)).until(() -> ours(stub, prefix).size() == 2);
        } finally {
            channel.shutdownNow();
            // whatever started, newest first, also when a later one failed to start: nothing keeps the fork alive
            for (int i = started.size() - 1; i >= 0; i--) {
                started.get(i).close();
            }
        }
    }

    private static ConfigurableApplicationContext start(List<ConfigurableApplicationContext> started,
                                                        SpringApplicationBuilder app, String... args) {
        ConfigurableApplicationContext context = app.run(args);
        started.add(context);
        return context;
    }

    private static List<WorkerInfo> ours(RouterServiceGrpc.RouterServiceBlockingStub stub, String prefix) {
        return stub.listWorkers(ListWorkersRequest.getDefaultInstance()).getWorkersList().stream()
                .filter(w -> w.getWorkerId().startsWith(prefix) && w.getRoutable()).toList();
    }

    private static RouteDecision route(RouterServiceGrpc.RouterServiceBlockingStub stub, String id, int[] prompt, boolean release) {
        RouteRequest.Builder r = RouteRequest.newBuilder().setRequestId(id).setModel("flotilla-sim").setIsl(prompt.length)
                .setOsl(4).setBlockSize(16);
        Arrays.stream(HASHER.seqHashes(prompt)).forEach(r::addSeqHashes);
        RouteDecision d = stub.withDeadlineAfter(5, TimeUnit.SECONDS).route(r.build());
        if (release) {
            stub.release(RequestRef.newBuilder().setRequestId(id).build());
        }
        return d;
    }

    /** Routes, serves on the chosen worker over gRPC, releases. */
    private static RouteDecision routeAndServe(RouterServiceGrpc.RouterServiceBlockingStub stub, String id, int[] prompt) {
        RouteDecision d = route(stub, id, prompt, false);
        String[] hostPort = d.getWorkerEndpoint().split(":");
        ManagedChannel ch = NettyChannelBuilder.forAddress(hostPort[0], Integer.parseInt(hostPort[1])).usePlaintext().build();
        try {
            GenerateRequest.Builder g = GenerateRequest.newBuilder().setRequestId(id)
                    .setStop(StopConditions.newBuilder().setMaxTokens(4).setIgnoreEos(true));
            Arrays.stream(prompt).forEach(g::addTokenIds);
            WorkerServiceGrpc.newBlockingStub(ch).generate(g.build()).forEachRemaining(c -> { });
        } finally {
            ch.shutdownNow();
            stub.release(RequestRef.newBuilder().setRequestId(id).build());
        }
        return d;
    }

    private static String get(int port) throws Exception {
        return get(port, "/actuator/router");
    }

    private static String get(int port, String path) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static String openMetrics(int port) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/prometheus"))
                .header("Accept", "application/openmetrics-text; version=1.0.0; charset=utf-8").build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static void post(int port, String json) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/actuator/router"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }
}
