package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.openai.client.OpenAIClient;
import com.openai.models.chat.completions.ChatCompletion;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.Observability;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.cluster.launcher.ServedModel;
import io.flotilla.gateway.sdk.SdkExamples;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.WorkerInfo;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The whole local cluster as {@code bin/flotilla up} starts it — a real Kafka broker and every
 * service as its own JVM from its exec jar — driven over its public interfaces: the OpenAI HTTP API,
 * gRPC, and actuator. Runs after every module is packaged ({@code ./mvnw verify}).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LocalClusterE2ETest {

    private static final HttpClient HTTP = ClusterUnderTest.HTTP;
    private static final ObjectMapper JSON = new ObjectMapper();
    /** A prompt the simulated engines' script answers with a think block. */
    private static final String THINK = "Think it through: why is the sky blue?";

    /** Every service's spans (the cluster runs as {@code up --tracing-endpoint} makes it). */
    private static final SpanCollector spans = SpanCollector.start();

    @RegisterExtension
    static final ClusterExtension cluster = new ClusterExtension("flotilla-e2e-", c -> {
        ServedModel model = ServedModel.DEFAULT.withBehaviour(null, "qwen3", script(c.stateDir()).toString(), c.stateDir());
        c.observability(Observability.tracingTo(spans.spansUrl()));
        return c.up(ClusterSpec.builder().workers(2).model(model).timeout(Duration.ofSeconds(240)).build());
    });

    @org.junit.jupiter.api.AfterAll
    static void stopCollector() {
        spans.close(); // before the cluster stops: spans the services flush while stopping are not needed
    }

    /** Scripted mode (bin/flotilla up --sim-script): the SDK examples' model, and one that thinks aloud. */
    private static Path script(Path dir) throws Exception {
        var rules = JSON.createArrayNode();
        rules.addObject().put("contains", SdkExamples.TOOL_RESULT_MARK).put("reply", SdkExamples.FINAL_ANSWER);
        rules.addObject().put("contains", SdkExamples.QUESTION).put("reply", SdkExamples.CALLS_HERMES);
        rules.addObject().put("contains", THINK).put("reply", "<think>\nFirst, the sky.\n</think>\n\nIt is blue.");
        Path file = dir.resolve("sim-script.json");
        Files.writeString(file, JSON.writeValueAsString(JSON.createObjectNode().set("rules", rules)));
        return file;
    }

    @Test
    @Order(1)
    void everyServiceIsUpAndTheRouterSeesBothWorkers() {
        assertThat(cluster.get().started()).extracting(RunningService::name)
                .containsExactly("kafka", "kv-indexer", "router", "planner", "worker-0", "worker-1", "gateway");
        await().atMost(Duration.ofSeconds(30)).until(() -> routable().size() == 2);
        // The first requests run cold code in four JVMs; the cluster is ready once it serves one.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> chat("warm-up").statusCode() == 200);
    }

    @Test
    @Order(1)
    void everyServiceJvmMapsTheClassDataArchiveOfItsJar() throws Exception {
        for (RunningService s : cluster.get().started()) {
            if (s.name().equals("kafka")) {
                continue;
            }
            Path maps = Path.of("/proc", Long.toString(s.pid()), "maps");
            org.junit.jupiter.api.Assumptions.assumeTrue(Files.isReadable(maps), "no /proc on this system");
            // up built the archive (a training run) unless an earlier up had; either way the JVM must have mapped it.
            assertThat(Files.readString(maps)).as(s.name()).containsPattern("/target/cds/app\\.jsa");
        }
    }

    @Test
    @Order(1)
    void workersCompileWithTheClientCompilerOnlyAndTheOtherServicesTiered() throws Exception {
        for (RunningService s : cluster.get().started()) {
            if (s.name().equals("kafka")) {
                continue; // the launcher's broker has its own flags (C1 only as well)
            }
            java.util.Optional<List<String>> commandLine = ClusterUnderTest.commandLine(s.pid());
            org.junit.jupiter.api.Assumptions.assumeTrue(commandLine.isPresent(), "no /proc on this system");
            List<String> args = commandLine.get();
            assertThat(args.contains("-XX:TieredStopAtLevel=1")).as(s.name() + ": " + args)
                    .isEqualTo(s.name().startsWith("worker-"));
        }
    }

    /**
     * One request is one trace: the client's W3C {@code traceparent} is continued by the gateway, the router, the
     * indexer (FindMatches) and the worker, whose engine's part is a span of its own.
     */
    @Test
    @Order(2)
    void oneRequestIsOneTraceAcrossEveryService() throws Exception {
        String traceId = "4bf92f3577b34da6a3ce929d0e0e" + String.format("%04x", (int) (System.nanoTime() & 0xffff));
        String body = JSON.writeValueAsString(JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", 4)
                .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user")
                        .put("content", "Trace me through every service."))));
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/chat/completions"))
                .header("Content-Type", "application/json").header("traceparent", "00-" + traceId + "-00f067aa0ba902b7-01")
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(body)).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);

        await("spans of trace " + traceId + " from every service").atMost(Duration.ofSeconds(20))
                .pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
                    List<SpanCollector.Span> trace = spans.trace(traceId);
                    assertThat(trace).extracting(SpanCollector.Span::service)
                            .as("services in trace %s: %s", traceId, trace)
                            .contains("gateway", "router", "kv-indexer", "worker-agent");
                    assertThat(trace).as("the engine's span on the worker").anySatisfy(s -> {
                        assertThat(s.service()).isEqualTo("worker-agent");
                        assertThat(s.name()).isEqualTo("engine generate");
                    });
                    // one tree: the gateway's HTTP span (child of the client's) is the root of everything else
                    java.util.Set<String> ids = new java.util.HashSet<>(trace.stream().map(SpanCollector.Span::id).toList());
                    assertThat(trace).as("every span's parent is in the trace, or is the client's span").allSatisfy(s ->
                            assertThat(ids.contains(s.parentId()) || "00f067aa0ba902b7".equals(s.parentId()))
                                    .as(s.toString()).isTrue());
                });
        assertThat(requestRecordTraceparents("00-" + traceId + "-"))
                .as("the request's record on %s carries its trace", Topics.REQUESTS.name())
                .anySatisfy(t -> assertThat(t).startsWith("00-" + traceId + "-"));
    }

    /**
     * The {@code traceparent} headers of the records on the requests topic, read from the start until one begins
     * with {@code prefix} (at most 20 s).
     */
    private static List<String> requestRecordTraceparents(String prefix) {
        java.util.Properties props = new java.util.Properties();
        props.put("bootstrap.servers", "127.0.0.1:" + Ports.KAFKA);
        List<String> found = new java.util.ArrayList<>();
        try (var consumer = new org.apache.kafka.clients.consumer.KafkaConsumer<>(props,
                new org.apache.kafka.common.serialization.ByteArrayDeserializer(),
                new org.apache.kafka.common.serialization.ByteArrayDeserializer())) {
            List<org.apache.kafka.common.TopicPartition> partitions = consumer.partitionsFor(Topics.REQUESTS.name()).stream()
                    .map(p -> new org.apache.kafka.common.TopicPartition(p.topic(), p.partition())).toList();
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (found.stream().noneMatch(t -> t.startsWith(prefix)) && System.nanoTime() < until) {
                for (var record : consumer.poll(Duration.ofMillis(500))) {
                    var h = record.headers().lastHeader("traceparent");
                    if (h != null) {
                        found.add(new String(h.value(), java.nio.charset.StandardCharsets.UTF_8));
                    }
                }
            }
        }
        return found;
    }

    @Test
    @Order(2)
    void aRepeatedLongPromptIsServedFromCacheOnTheSameWorker() throws Exception {
        String prompt = "You are a careful assistant. ".repeat(300) + "Summarise the rules.";
        HttpResponse<String> first = chat(prompt);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        String worker = first.headers().firstValue("x-flotilla-worker").orElseThrow();
        // The second request must find the first one's blocks through the indexer.
        await().atMost(Duration.ofSeconds(20)).until(() -> blocksOf(worker) > 0);
        ClusterUnderTest.awaitRouterIdle();
        HttpResponse<String> second = chat(prompt);
        assertThat(second.statusCode()).isEqualTo(200);
        assertThat(second.headers().firstValue("x-flotilla-worker")).contains(worker);
        JsonNode usage = JSON.readTree(second.body()).get("usage");
        assertThat(usage.get("prompt_tokens_details").get("cached_tokens").asInt()).isGreaterThan(0);
    }

    @Test
    @Order(3)
    void theOfficialSdkExamplesRunAgainstScriptedSimulatedEngines() throws Exception {
        OpenAIClient client = ClusterUnderTest.sdkClient();
        try {
            SdkExamples.FunctionCalling run = SdkExamples.functionCalling(client, "flotilla-sim");
            assertThat(run.calls()).as("the script's Hermes calls, parsed by the gateway")
                    .extracting(c -> c.function().arguments(SdkExamples.GetSdkQuality.class).name)
                    .containsExactly("OpenAI Java SDK", "Unknown Company SDK");
            assertThat(run.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
            assertThat(run.answer()).isEqualTo(SdkExamples.FINAL_ANSWER);

            ChatCompletion streamed = SdkExamples.streamingFunctionCalling(client, "flotilla-sim");
            assertThat(streamed.choices().get(0).message().toolCalls().orElseThrow()).hasSize(2);

            List<SdkExamples.Book> books = SdkExamples.structuredOutputs(client, "flotilla-sim");
            assertThat(books).as("the simulated engine writes JSON valid for the class's schema").isNotEmpty()
                    .allSatisfy(b -> {
                        assertThat(b.title).isNotBlank();
                        assertThat(b.author.name).isNotBlank();
                    });

            assertThat(SdkExamples.logprobs(client, "flotilla-sim")).as("the simulated engine's own distribution")
                    .isNotEmpty().allSatisfy(t -> {
                        assertThat(t.logprob()).isNegative();
                        assertThat(t.topLogprobs()).hasSize(2);
                        assertThat(t.topLogprobs().get(0).logprob()).isGreaterThanOrEqualTo(t.topLogprobs().get(1).logprob());
                    });
        } finally {
            client.close();
        }
        JsonNode thought = JSON.readTree(chat(THINK, 64).body());
        assertThat(thought.at("/choices/0/message/reasoning_content").asText()).isEqualTo("\nFirst, the sky.\n");
        assertThat(thought.at("/choices/0/message/content").asText()).isEqualTo("It is blue.");
        assertThat(thought.at("/usage/completion_tokens_details/reasoning_tokens").asInt()).isPositive();
    }

    @Test
    @Order(3)
    void theOfficialNodeSdkExamplesRunToo() throws Exception {
        ClusterUnderTest.runNodeSdkExamples("flotilla-sim");
    }

    @Test
    @Order(4)
    void theBenchToolRunsAgainstTheCluster() throws Exception {
        Path out = Files.createTempDirectory("flotilla-e2e-bench-");
        int rc = new picocli.CommandLine(new io.flotilla.bench.BenchCli()).execute("--url", "http://127.0.0.1:" + Ports.GATEWAY_HTTP,
                "--groups", "2", "--prompts-per-group", "4", "--prefix-len", "512", "--suffix-len", "32",
                "--output-len", "8", "--rate", "20", "--seed", "3", "--quiet", "--out", out.toString());
        assertThat(rc).isZero();
        JsonNode summary = JSON.readTree(out.resolve("summary.json").toFile());
        assertThat(summary.get("requests").asInt()).isEqualTo(8);
        assertThat(summary.get("completed").asInt()).isEqualTo(8);
        assertThat(summary.get("router_mode").asText()).isEqualTo("kv");
        assertThat(summary.get("ttft_ms").get("p50").asDouble()).isPositive();
        assertThat(summary.get("oracle_hit_rate").asDouble()).isPositive();
        assertThat(out.resolve("requests.csv")).exists();
        assertThat(out.resolve("report.html")).exists();
    }

    /**
     * Panels a cluster without tiers, shared limits or a scaling planner cannot show, each with what it needs;
     * their meters are checked against the sources instead.
     */
    private static final java.util.Map<String, String> CONDITIONAL = java.util.Map.ofEntries(
            java.util.Map.entry("flotilla_worker_kvbm_used_blocks", "KV tiers (--kvbm-host)"),
            java.util.Map.entry("flotilla_worker_kvbm_capacity_blocks", "KV tiers (--kvbm-host)"),
            java.util.Map.entry("flotilla_worker_kvbm_onboarded_blocks_total", "KV tiers (--kvbm-host)"),
            java.util.Map.entry("flotilla_worker_kvbm_hit_tokens_total", "KV tiers (--kvbm-host)"),
            java.util.Map.entry("flotilla_gateway_limits_store_up", "a shared limit store (--gateways 2)"),
            java.util.Map.entry("flotilla_gateway_limits_fallback_total", "a shared limit store that failed"),
            java.util.Map.entry("flotilla_gateway_flow_queued", "a request that waited in a flow-control queue"));

    /**
     * Every metric a Grafana panel queries is one the services export: scraped from every service of this cluster
     * after its traffic, or, for a panel that needs another layout ({@link #CONDITIONAL}), a meter the sources
     * register. The operator metric families (gRPC, Kafka clients, breakers) and {@code /actuator/info}'s build
     * section are checked on the services that have them.
     */
    @Test
    @Order(4)
    void everyDashboardPanelQueriesAMetricTheServicesExport() throws Exception {
        java.util.Set<String> exported = new java.util.TreeSet<>();
        java.util.Map<Integer, String> scraped = new java.util.LinkedHashMap<>();
        for (int port : List.of(Ports.GATEWAY_MANAGEMENT, Ports.ROUTER_MANAGEMENT, Ports.INDEXER_MANAGEMENT,
                Ports.PLANNER_HTTP, Ports.workerManagement(0), Ports.workerManagement(1))) {
            String body = ClusterUnderTest.prometheus(port);
            scraped.put(port, body);
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("(?m)^([a-zA-Z_:][a-zA-Z0-9_:]*)[{ ]").matcher(body);
            while (m.find()) {
                exported.add(m.group(1));
            }
        }
        JsonNode dashboard = JSON.readTree(Path.of("..", "deploy", "grafana", "dashboards", "flotilla.json").toFile());
        java.util.Set<String> queried = new java.util.TreeSet<>();
        java.util.regex.Pattern metric = java.util.regex.Pattern.compile(
                "\\b((?:flotilla|grpc|kafka|resilience4j|jvm|process|http)_[a-zA-Z0-9_]+)");
        for (JsonNode panel : dashboard.path("panels")) {
            for (JsonNode target : panel.path("targets")) {
                java.util.regex.Matcher m = metric.matcher(target.path("expr").asText());
                while (m.find()) {
                    queried.add(m.group(1));
                }
            }
        }
        assertThat(queried).as("metrics the dashboard queries").hasSizeGreaterThan(25);
        java.util.Set<String> registered = meterNamesInSources();
        List<String> problems = new java.util.ArrayList<>();
        for (String name : queried) {
            String base = name.replaceAll("_(bucket|count|sum)$", "").replaceAll("_(total|seconds)$", "");
            if (exported.contains(name)) {
                if (CONDITIONAL.containsKey(name)) {
                    problems.add(name + " is exported by this cluster: not conditional");
                }
            } else if (!CONDITIONAL.containsKey(name)) {
                problems.add(name + ": no service exports it");
            } else if (!registered.contains(base)) {
                problems.add(name + " (needs " + CONDITIONAL.get(name) + "): no meter " + base + " in the sources");
            }
        }
        assertThat(problems).as("dashboard metrics (exported here: %s)", exported).isEmpty();

        for (int port : List.of(Ports.ROUTER_MANAGEMENT, Ports.INDEXER_MANAGEMENT, Ports.workerManagement(0))) {
            assertThat(scraped.get(port)).as("grpc server timers on %d", port).contains("grpc_server_seconds_count{");
        }
        for (int port : List.of(Ports.GATEWAY_MANAGEMENT, Ports.ROUTER_MANAGEMENT)) {
            assertThat(scraped.get(port)).as("grpc client timers on %d", port).contains("grpc_client_seconds_count{");
        }
        for (int port : List.of(Ports.ROUTER_MANAGEMENT, Ports.PLANNER_HTTP, Ports.workerManagement(0))) {
            assertThat(scraped.get(port)).as("Kafka producer metrics on %d", port).contains("kafka_producer_");
        }
        for (int port : List.of(Ports.ROUTER_MANAGEMENT, Ports.INDEXER_MANAGEMENT)) {
            assertThat(scraped.get(port)).as("Kafka consumer metrics on %d", port).contains("kafka_consumer_");
        }
        assertThat(scraped.get(Ports.ROUTER_MANAGEMENT)).contains("resilience4j_circuitbreaker_state{");
        JsonNode info = JSON.readTree(ClusterUnderTest.get("http://127.0.0.1:" + Ports.ROUTER_MANAGEMENT + "/actuator/info"));
        assertThat(info.path("build").path("artifact").asText()).isEqualTo("router-service");
    }

    /** The meter names ({@code "flotilla.…"} literals) in the services' main sources, in Prometheus form. */
    private static java.util.Set<String> meterNamesInSources() throws java.io.IOException {
        java.util.Set<String> names = new java.util.TreeSet<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"(flotilla\\.[a-z0-9_.]+)\"").matcher(mainSources());
        while (m.find()) {
            names.add(m.group(1).replace('.', '_'));
        }
        return names;
    }

    /** Every main Java source of the services, concatenated. */
    private static String mainSources() throws java.io.IOException {
        StringBuilder all = new StringBuilder();
        for (String module : List.of("gateway-service", "router-service", "kv-indexer-service", "planner-service",
                "worker-agent")) {
            try (var files = Files.walk(Path.of("..", module, "src", "main", "java"))) {
                for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                    all.append(Files.readString(f));
                }
            }
        }
        return all.toString();
    }

    @Test
    @Order(5)
    void aWorkerKilledMidStreamLeavesOneCompleteStreamAndLeavesMembershipWithinItsLease() throws Exception {
        String body = JSON.writeValueAsString(JSON.createObjectNode()
                .put("model", "flotilla-sim").put("max_tokens", 400).put("ignore_eos", true).put("stream", true)
                .put("prompt", "Count slowly to a large number.")
                .set("stream_options", JSON.createObjectNode().put("include_usage", true)));
        HttpResponse<java.util.stream.Stream<String>> resp = HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/completions"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofLines());
        assertThat(resp.statusCode()).isEqualTo(200);
        String served = resp.headers().firstValue("x-flotilla-worker").orElseThrow();
        int victim = Integer.parseInt(served.substring("worker-".length()));
        int chunks = 0;
        boolean killed = false;
        boolean done = false;
        JsonNode usage = null;
        long killedAt = 0;
        for (java.util.Iterator<String> it = resp.body().iterator(); it.hasNext(); ) {
            String line = it.next();
            if (!line.startsWith("data: ")) {
                continue;
            }
            String data = line.substring(6);
            if (data.equals("[DONE]")) {
                done = true;
                break;
            }
            JsonNode chunk = JSON.readTree(data);
            assertThat(chunk.has("error")).as(data).isFalse();
            if (chunk.hasNonNull("usage")) {
                usage = chunk.get("usage");
            }
            if (++chunks == 20 && !killed) {
                cluster.get().launcher().killWorker(victim); // SIGKILL, mid-stream
                killed = true;
                killedAt = System.nanoTime();
            }
        }
        assertThat(killed).as("the stream was long enough to kill its worker mid-way").isTrue();
        assertThat(done).isTrue();
        assertThat(usage).isNotNull();
        assertThat(usage.get("completion_tokens").asInt()).as("one complete stream despite the dead worker").isEqualTo(400);

        await().atMost(Duration.ofSeconds(8)).until(() -> routable().size() == 1);
        await().atMost(Duration.ofSeconds(8)).until(() -> !kvindex().get("workers").has(served)
                || "expired".equals(kvindex().get("workers").get(served).get("state").asText()));
        System.out.printf("%s left router membership and the index %.1f s after SIGKILL%n", served,
                (System.nanoTime() - killedAt) / 1e9);
        HttpResponse<String> after = chat("Still serving after a worker died?");
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.headers().firstValue("x-flotilla-worker")).contains(Ports.workerId(1 - victim));
    }

    private static List<WorkerInfo> routable() {
        return cluster.get().routable();
    }

    private static HttpResponse<String> chat(String content) throws Exception {
        return chat(content, 8);
    }

    private static HttpResponse<String> chat(String content, int maxTokens) throws Exception {
        String body = JSON.writeValueAsString(JSON.createObjectNode()
                .put("model", "flotilla-sim").put("max_tokens", maxTokens)
                .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", content))));
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/chat/completions"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode kvindex() throws Exception {
        return JSON.readTree(HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + Ports.INDEXER_MANAGEMENT + "/actuator/kvindex")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
    }

    private static long blocksOf(String worker) throws Exception {
        JsonNode w = kvindex().get("workers").get(worker);
        return w == null ? 0 : w.get("blocks").asLong();
    }
}
