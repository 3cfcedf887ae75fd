package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.ExternalEngines;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.kafka.Topic;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.engine.sglang.FakeSglangEngine;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.common.config.ConfigResource;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.Writer;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The local cluster as against an operator's infrastructure: Kafka is a separately started broker that
 * requires SASL_PLAINTEXT (one JAAS user) and has auto-create off and no topics; every service reaches it
 * through {@code spring.kafka.*} settings only ({@code up --kafka HOST:PORT --kafka-config FILE}); the two
 * workers front SGLang servers through SGLang's native API (fakes written from SGLang's wire formats: one
 * streams cumulative output, SGLang's default, the other deltas) and their ZMQ KV event publishers.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SglangSaslE2ETest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MODEL = "flotilla-sim";
    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of(MODEL, "cl100k_base", "bf16/bs16/paged"), 16);

    private static KafkaBroker kafka;
    private static FakeSglangEngine[] engines;
    private static ClusterUnderTest cluster;
    private static ManagedChannel indexer;

    @BeforeAll
    static void up() throws Exception {
        Path state = Files.createTempDirectory("flotilla-e2e-sglang-sasl-");
        kafka = new KafkaBroker(KafkaBroker.Config.forTests(state.resolve("kafka"))
                .withSasl(new KafkaBroker.SaslUser("flotilla", "e2e-secret")).withoutTopics()).start();
        Path clientConfig = state.resolve("client.properties");
        Properties p = new Properties();
        p.putAll(kafka.springProperties());
        try (Writer w = Files.newBufferedWriter(clientConfig)) {
            p.store(w, null);
        }
        engines = new FakeSglangEngine[]{FakeSglangEngine.start(16, 21), FakeSglangEngine.start(16, 22)};
        engines[1].setIncremental(true);
        ExternalEngines external = ExternalEngines.parse("sglang", engines[0].url() + "," + engines[1].url(),
                engines[0].kvEvents() + "," + engines[1].kvEvents(),
                engines[0].kvEventsReplay() + "," + engines[1].kvEventsReplay(), "fake/model", 2);
        cluster = ClusterUnderTest.start(state, c -> c.up(ClusterSpec.builder().workers(2)
                .externalKafka(kafka.bootstrapServers()).kafkaConfig(clientConfig).engines(external)
                .timeout(Duration.ofSeconds(240)).build()));
        for (FakeSglangEngine e : engines) {
            e.awaitSubscriber(Duration.ofSeconds(30));
        }
        indexer = NettyChannelBuilder.forAddress("127.0.0.1", Ports.INDEXER_GRPC).usePlaintext().build();
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> complete(tokens(20, 1)).statusCode() == 200);
    }

    @AfterAll
    static void down() {
        if (indexer != null) {
            indexer.shutdownNow();
        }
        try {
            if (cluster != null) {
                cluster.close();
            }
        } finally {
            if (engines != null) {
                Arrays.stream(engines).forEach(FakeSglangEngine::close);
            }
            if (kafka != null) {
                kafka.closeAndDelete();
            }
        }
    }

    @Test
    @Order(1)
    void theServicesCreatedEveryTopicTheyWriteWithTheDeclaredConfigsThroughSasl() throws Exception {
        try (Admin admin = Admin.create(kafka.clientConfig())) {
            Map<String, Topic> declared = Topics.ALL.stream().collect(Collectors.toMap(Topic::name, t -> t));
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.listTopics().names().get(10, TimeUnit.SECONDS)
                    .containsAll(declared.keySet()));
            Map<ConfigResource, Config> configs = admin.describeConfigs(declared.keySet().stream()
                    .map(n -> new ConfigResource(ConfigResource.Type.TOPIC, n)).toList()).all().get(10, TimeUnit.SECONDS);
            configs.forEach((resource, config) -> declared.get(resource.name()).configs().forEach((key, value) ->
                    assertThat(config.get(key).value()).as("%s %s", resource.name(), key).isEqualTo(value)));
        }
        for (RunningService s : cluster.started()) {
            if (s.managementPort() > 0) {
                JsonNode health = JSON.readTree(ClusterUnderTest.get("http://127.0.0.1:" + s.managementPort() + "/actuator/health"));
                assertThat(health.at("/components/kafka/status").asText()).as("%s: %s", s.name(), health.path("components")
                        .path("kafka")).isEqualTo("UP");
                assertThat(health.at("/components/kafka/details/securityProtocol").asText()).isEqualTo("SASL_PLAINTEXT");
            }
        }
    }

    @Test
    @Order(2)
    void completionsAreServedBySglangWhetherItStreamsCumulativeOutputOrDeltas() throws Exception {
        HttpResponse<String> r = complete(tokens(40, 10));
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
        JsonNode body = JSON.readTree(r.body());
        assertThat(body.at("/usage/completion_tokens").asInt()).as("the fake's three tokens, each relayed once").isEqualTo(3);
        assertThat(body.at("/choices/0/text").asText()).isNotEmpty();
        for (int n = 0; n < 2; n++) { // worker 0's engine streams cumulative output, worker 1's deltas
            assertThat(generateOn(n, tokens(24, 20 + n))).as("worker-%d relays each id once", n).containsExactly(101, 102, 103);
            var req = engines[n].requests().get(engines[n].requests().size() - 1);
            assertThat(req.path("input_ids").size()).isEqualTo(24);
            assertThat(req.path("sampling_params").path("max_new_tokens").asInt()).isEqualTo(8);
        }
    }

    /** A request straight to worker n's WorkerService; the token ids it streamed. */
    private static List<Integer> generateOn(int n, int[] prompt) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", Ports.workerGrpc(n)).usePlaintext().build();
        try {
            GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId("sglang-e2e-" + n + "-" + System.nanoTime())
                    .setModel(MODEL).setStop(StopConditions.newBuilder().setMaxTokens(8));
            Arrays.stream(prompt).forEach(r::addTokenIds);
            List<Integer> ids = new java.util.ArrayList<>();
            WorkerServiceGrpc.newBlockingStub(ch).withDeadlineAfter(30, TimeUnit.SECONDS).generate(r.build())
                    .forEachRemaining(c -> ids.addAll(c.getTokenIdsList()));
            return ids;
        } finally {
            ch.shutdownNow();
        }
    }

    @Test
    @Order(3)
    void theRouterSeesSglangsCapacityAndTheIndexerItsCachedPages() throws Exception {
        JsonNode router = JSON.readTree(ClusterUnderTest.get("http://127.0.0.1:" + Ports.ROUTER_MANAGEMENT + "/actuator/router"));
        for (JsonNode w : router.path("workers")) {
            assertThat(w.path("capacity_blocks").asInt()).as("32,000 tokens of /get_server_info in 16-token blocks").isEqualTo(2000);
            assertThat(w.path("capacity_source").asText()).isEqualTo("engine");
            assertThat(w.path("engine").asText()).isEqualTo("sglang");
        }
        int[] prompt = tokens(320, 99);
        HttpResponse<String> first = complete(prompt);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        String worker = first.headers().firstValue("x-flotilla-worker").orElseThrow();
        long[] hashes = HASHER.seqHashes(prompt);
        await().atMost(Duration.ofSeconds(20)).until(() -> matchedBlocks(worker, hashes) == hashes.length);
        ClusterUnderTest.awaitRouterIdle();
        HttpResponse<String> again = complete(prompt);
        assertThat(again.headers().firstValue("x-flotilla-worker")).as("the prefix SGLang announced cached").contains(worker);
    }

    private static int matchedBlocks(String worker, long[] hashes) {
        return ClusterUnderTest.matchedBlocks(indexer, MODEL, worker, hashes);
    }

    private static HttpResponse<String> complete(int[] prompt) throws Exception {
        ArrayNode ids = JSON.createArrayNode();
        Arrays.stream(prompt).forEach(ids::add);
        String body = JSON.writeValueAsString(JSON.createObjectNode().put("model", MODEL).put("max_tokens", 8).set("prompt", ids));
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/completions"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static int[] tokens(int n, int salt) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Math.floorMod(salt * 7919 + i * 131, 50_000);
        }
        return out;
    }
}
