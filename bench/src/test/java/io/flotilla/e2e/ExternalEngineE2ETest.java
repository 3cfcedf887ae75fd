package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.flotilla.cluster.launcher.ExternalEngines;
import io.flotilla.cluster.launcher.LocalCluster;
import io.flotilla.cluster.launcher.PlannerOptions;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerMatch;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.engine.openai.FakeVllmEngine;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The local cluster with {@code --engine openai-http}: two worker agents, each in front of a fake vLLM
 * engine run by this test (OpenAI HTTP server, ZMQ KV event publisher and replay socket). Worker 0's
 * engine speaks the positional-array msgpack form, worker 1's the tagged-map form; each fake caches
 * the prompts it serves and announces them with {@code BlockStored} events carrying token ids.
 * Everything else is as {@code bin/flotilla up} starts it: real Kafka, every service its own JVM.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExternalEngineE2ETest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of("flotilla-sim", "cl100k_base", "bf16/bs16/paged"), 16);
    private static final String SERVED_MODEL = "fake-llm";

    private static FakeVllmEngine[] engines;
    private static LocalCluster cluster;
    private static List<RunningService> started;
    private static ManagedChannel router;
    private static ManagedChannel indexer;

    @BeforeAll
    static void up() throws Exception {
        engines = new FakeVllmEngine[]{
                FakeVllmEngine.start(FakeVllmEngine.WireForm.ARRAY, 16, 10),
                FakeVllmEngine.start(FakeVllmEngine.WireForm.MAP, 16, 11)};
        ExternalEngines external = ExternalEngines.parse("openai-http",
                engines[0].url() + "," + engines[1].url(),
                engines[0].kvEvents() + "," + engines[1].kvEvents(),
                engines[0].kvEventsReplay() + "," + engines[1].kvEventsReplay(),
                SERVED_MODEL, 16, 2);
        Path root = Path.of("").toAbsolutePath().getParent();
        cluster = new LocalCluster(root, Files.createTempDirectory("flotilla-e2e-engines-"), System.out);
        started = cluster.up(2, 0, 0, "kv", null, 1.0, PlannerOptions.SHADOW, external, Duration.ofSeconds(240));
        for (FakeVllmEngine e : engines) {
            e.awaitSubscriber(Duration.ofSeconds(30));
        }
        router = NettyChannelBuilder.forAddress("127.0.0.1", Ports.ROUTER_GRPC).usePlaintext().build();
        indexer = NettyChannelBuilder.forAddress("127.0.0.1", Ports.INDEXER_GRPC).usePlaintext().build();
        await().atMost(Duration.ofSeconds(30)).until(() -> RouterServiceGrpc.newBlockingStub(router)
                .listWorkers(ListWorkersRequest.getDefaultInstance()).getWorkersList().stream()
                .filter(WorkerInfo::getRoutable).count() == 2);
        // The first requests run cold code in four JVMs; the cluster is ready once it serves one.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> chat("warm-up").statusCode() == 200);
    }

    @AfterAll
    static void down() {
        for (ManagedChannel c : new ManagedChannel[]{router, indexer}) {
            if (c != null) {
                c.shutdownNow();
            }
        }
        try {
            if (cluster != null) {
                cluster.down(Duration.ofSeconds(20));
                assertThat(started).noneMatch(RunningService::alive);
            }
        } finally {
            if (engines != null) {
                for (FakeVllmEngine e : engines) {
                    if (e != null) {
                        e.close();
                    }
                }
            }
        }
    }

    @Test
    @Order(1)
    void chatAndCompletionsAreServedByTheFakeEngines() throws Exception {
        HttpResponse<String> chat = chat("Which engine answers this?");
        assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(chat.body());
        assertThat(body.at("/choices/0/message/content").asText()).isNotEmpty();
        assertThat(body.at("/usage/completion_tokens").asInt()).as("the fake's three tokens").isEqualTo(3);
        FakeVllmEngine chatEngine = engineOf(chat);
        assertThat(chatEngine.server().requests()).last().satisfies(r -> {
            assertThat(r.path("model").asString()).isEqualTo(SERVED_MODEL);
            assertThat(r.path("stream").asBoolean()).isTrue();
        });

        int[] prompt = tokens(40, 1);
        HttpResponse<String> completion = complete(prompt);
        assertThat(completion.statusCode()).as(completion.body()).isEqualTo(200);
        JsonNode c = JSON.readTree(completion.body());
        assertThat(c.at("/usage/prompt_tokens").asInt()).isEqualTo(40);
        assertThat(c.at("/usage/completion_tokens").asInt()).isEqualTo(3);
        List<int[]> served = engineOf(completion).prompts();
        assertThat(served.get(served.size() - 1)).as("the token ids reached the engine unchanged").containsExactly(prompt);
    }

    @Test
    @Order(2)
    void aRepeatedLongChatPrefixGoesToTheSameAgentBecauseItsEngineSaidItCachedIt() throws Exception {
        String prefix = "You are a careful assistant who answers in full sentences. ".repeat(60);
        HttpResponse<String> first = chat(prefix + "Question 0?");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        String worker = first.headers().firstValue("x-flotilla-worker").orElseThrow();
        await().atMost(Duration.ofSeconds(20)).until(() -> indexedBlocks(worker) > 0);
        for (int i = 1; i <= 3; i++) {
            HttpResponse<String> next = chat(prefix + "Question " + i + "?");
            assertThat(next.statusCode()).isEqualTo(200);
            assertThat(next.headers().firstValue("x-flotilla-worker")).as("request %d", i).contains(worker);
            assertThat(JSON.readTree(next.body()).at("/usage/prompt_tokens_details/cached_tokens").asInt())
                    .as("the engine's prefix cache served the prefix").isGreaterThan(500);
        }
    }

    @Test
    @Order(3)
    void bothWireFormsReachTheIndexerAndRouteTheirPrefixes() throws Exception {
        for (int n = 0; n < 2; n++) {
            String worker = Ports.workerId(n);
            int[] prefix = tokens(320, 100 + n); // 20 blocks
            generateOn(n, prefix);
            long[] hashes = HASHER.seqHashes(prefix);
            await().atMost(Duration.ofSeconds(20)).until(() -> matchedBlocks(worker, hashes) == hashes.length);
            for (int k = 0; k < 3; k++) {
                int[] prompt = Arrays.copyOf(prefix, prefix.length + 5);
                Arrays.fill(prompt, prefix.length, prompt.length, 500 + k);
                HttpResponse<String> r = complete(prompt);
                assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
                assertThat(r.headers().firstValue("x-flotilla-worker")).as("%s wire form, request %d",
                        engines[n].wireForm(), k).contains(worker);
                assertThat(JSON.readTree(r.body()).at("/usage/prompt_tokens_details/cached_tokens").asInt()).isEqualTo(320);
            }
        }
    }

    @Test
    @Order(4)
    void aGapOnTheEnginesEventSocketIsRepairedThroughItsReplaySocket() throws Exception {
        double repairedBefore = workerMetric(0, "flotilla_worker_kv_events_gaps_repaired_total");
        int replaysBefore = engines[0].replayRequests();
        int[] lost = tokens(160, 200); // 10 blocks whose BlockStored never reaches the subscriber
        engines[0].loseNextBatch();
        generateOn(0, lost);
        generateOn(0, tokens(64, 201)); // the next batch shows the gap

        await().atMost(Duration.ofSeconds(20))
                .until(() -> workerMetric(0, "flotilla_worker_kv_events_gaps_repaired_total") == repairedBefore + 1);
        assertThat(engines[0].replayRequests()).isGreaterThan(replaysBefore);
        assertThat(workerMetric(0, "flotilla_worker_kv_events_resyncs_total")).isZero();
        long[] hashes = HASHER.seqHashes(lost);
        await().atMost(Duration.ofSeconds(20)).until(() -> matchedBlocks("worker-0", hashes) == hashes.length);
    }

    // --- helpers ---

    private static FakeVllmEngine engineOf(HttpResponse<String> r) {
        String worker = r.headers().firstValue("x-flotilla-worker").orElseThrow();
        return engines[Integer.parseInt(worker.substring("worker-".length()))];
    }

    /** A request straight to worker n's WorkerService, so its engine caches {@code prompt}. */
    private static void generateOn(int n, int[] prompt) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", Ports.workerGrpc(n)).usePlaintext().build();
        try {
            GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId("e2e-" + n + "-" + System.nanoTime())
                    .setModel("flotilla-sim").setStop(StopConditions.newBuilder().setMaxTokens(2));
            Arrays.stream(prompt).forEach(r::addTokenIds);
            GenerateChunk last = null;
            for (Iterator<GenerateChunk> it = WorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS)
                    .generate(r.build()); it.hasNext(); ) {
                last = it.next();
            }
            assertThat(last).isNotNull();
            assertThat(last.getUsage().getPromptTokens()).isEqualTo(prompt.length);
        } finally {
            ch.shutdownNow();
        }
    }

    private static int matchedBlocks(String worker, long[] hashes) {
        FindMatchesRequest.Builder r = FindMatchesRequest.newBuilder().setModel("flotilla-sim").setBlockSize(16);
        Arrays.stream(hashes).forEach(r::addSeqHashes);
        return IndexerServiceGrpc.newBlockingStub(indexer).withDeadlineAfter(5, TimeUnit.SECONDS).findMatches(r.build())
                .getMatchesList().stream().filter(m -> m.getWorkerId().equals(worker))
                .mapToInt(WorkerMatch::getMatchedBlocks).findFirst().orElse(0);
    }

    private static long indexedBlocks(String worker) throws Exception {
        JsonNode w = JSON.readTree(get("http://127.0.0.1:" + Ports.INDEXER_MANAGEMENT + "/actuator/kvindex")).at("/workers/" + worker);
        return w.isMissingNode() ? 0 : w.get("blocks").asLong();
    }

    /** Sum of a counter's samples on worker n's Prometheus endpoint. */
    private static double workerMetric(int n, String name) throws Exception {
        double sum = 0;
        boolean found = false;
        for (String line : get("http://127.0.0.1:" + Ports.workerManagement(n) + "/actuator/prometheus").split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                found = true;
            }
        }
        assertThat(found).as("%s on worker-%d", name, n).isTrue();
        return sum;
    }

    private static String get(String url) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(10)).build(),
                HttpResponse.BodyHandlers.ofString()).body();
    }

    private static HttpResponse<String> chat(String content) throws Exception {
        return post("/v1/chat/completions", JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", 8)
                .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", content))));
    }

    private static HttpResponse<String> complete(int[] prompt) throws Exception {
        ArrayNode ids = JSON.createArrayNode();
        Arrays.stream(prompt).forEach(ids::add);
        return post("/v1/completions", JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", 8).set("prompt", ids));
    }

    private static HttpResponse<String> post(String path, JsonNode body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + path))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Token ids below cl100k's vocabulary, distinct per salt. */
    private static int[] tokens(int n, int salt) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Math.floorMod(salt * 7919 + i * 131, 90_000) + 1000;
        }
        return out;
    }
}
