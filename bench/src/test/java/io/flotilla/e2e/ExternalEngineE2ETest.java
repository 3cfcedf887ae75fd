package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.openai.client.OpenAIClient;
import com.openai.models.chat.completions.ChatCompletion;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.ExternalEngines;
import io.flotilla.gateway.sdk.SdkExamples;
import io.flotilla.cluster.launcher.LocalCluster;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.cluster.launcher.ServedModel;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.StopConditions;
import io.flotilla.protocol.v1.WorkerInfo;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
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
 *
 * <p>The cluster serves a model of its own as {@code --model} / {@code --model-dir} would: a HuggingFace
 * directory written by this test whose {@code tokenizer.json} is byte-level BPE without merges (id =
 * byte value, then four Llama 3 style special tokens) and whose chat template is Llama 3's shape. So the
 * ids the engines receive, the blocks the workers publish and the blocks the gateway asks the router
 * about can all be worked out here, in the namespace (model, {@code name_or_path}, bf16/bs16/paged).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ExternalEngineE2ETest {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Dots, a slash and capitals: the gateway's models.[NAME] key must keep them. */
    private static final String MODEL = "Tiny/Byte-Llama-3.2";
    private static final String TOKENIZER_ID = "tiny-org/byte-llama";
    private static final BlockHasher HASHER = new BlockHasher(KvNamespace.of(MODEL, TOKENIZER_ID, "bf16/bs16/paged"), 16);
    private static final String SERVED_MODEL = "fake-llm";
    private static final List<String> SPECIAL = List.of("<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>",
            "<|eot_id|>"); // ids 256, 257, 258, 259
    private static final int VOCAB = 256 + SPECIAL.size();

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
                SERVED_MODEL, 2);
        Path state = Files.createTempDirectory("flotilla-e2e-engines-");
        ServedModel model = ServedModel.parse(MODEL, writeModelDir(state.resolve("byte-llama")).toString(), 16, false, state)
                .withBehaviour("llama3-json", null, null, state);
        for (FakeVllmEngine e : engines) {
            e.server().setReplies(ExternalEngineE2ETest::modelAnswer);
        }
        assertThat(model.tokenizerId()).isEqualTo(TOKENIZER_ID);
        Path root = Path.of("").toAbsolutePath().getParent();
        cluster = new LocalCluster(root, state, System.out);
        started = cluster.up(ClusterSpec.builder().workers(2).engines(external).model(model).timeout(Duration.ofSeconds(240)).build());
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
        assertThat(body.at("/choices/0/message/content").asText())
                .as("the fake's tokens 101, 102, 103 decoded with the model's tokenizer (bytes e, f, g)").isEqualTo("efg");
        assertThat(body.at("/usage/completion_tokens").asInt()).as("the fake's three tokens").isEqualTo(3);
        FakeVllmEngine chatEngine = engineOf(chat);
        assertThat(chatEngine.server().requests()).last().satisfies(r -> {
            assertThat(r.path("model").asString()).isEqualTo(SERVED_MODEL);
            assertThat(r.path("stream").asBoolean()).isTrue();
        });
        int[] rendered = chatIds("Which engine answers this?");
        List<int[]> chatPrompts = chatEngine.prompts();
        assertThat(chatPrompts.get(chatPrompts.size() - 1))
                .as("the model directory's template and tokenizer made the prompt, not ChatML and cl100k")
                .containsExactly(rendered);
        assertThat(body.at("/usage/prompt_tokens").asInt()).isEqualTo(rendered.length);

        HttpResponse<String> noModel = post("/v1/chat/completions", JSON.createObjectNode().put("max_tokens", 4)
                .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", "Hi"))));
        assertThat(noModel.statusCode()).as(noModel.body()).isEqualTo(200);
        assertThat(JSON.readTree(noModel.body()).path("model").asText()).as("--model is the default model").isEqualTo(MODEL);
        assertThat(JSON.readTree(ClusterUnderTest.get("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/models")).at("/data/0/id").asText())
                .isEqualTo(MODEL);

        int[] prompt = tokens(40, 1);
        HttpResponse<String> completion = complete(prompt);
        assertThat(completion.statusCode()).as(completion.body()).isEqualTo(200);
        JsonNode c = JSON.readTree(completion.body());
        assertThat(c.at("/usage/prompt_tokens").asInt()).isEqualTo(40);
        assertThat(c.at("/usage/completion_tokens").asInt()).isEqualTo(3);
        List<int[]> served = engineOf(completion).prompts();
        assertThat(served.get(served.size() - 1)).as("the token ids reached the engine unchanged").containsExactly(prompt);
        HttpResponse<String> outside = complete(new int[]{1, 2, VOCAB});
        assertThat(outside.statusCode()).as("id %d is past the model's vocabulary (cl100k would take it)", VOCAB)
                .isEqualTo(400);
    }

    @Test
    @Order(2)
    void aRepeatedLongChatPrefixGoesToTheSameAgentBecauseItsEngineSaidItCachedIt() throws Exception {
        String prefix = "You are a careful assistant who answers in full sentences. ".repeat(60);
        HttpResponse<String> first = chat(prefix + "Question 0?");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        String worker = first.headers().firstValue("x-flotilla-worker").orElseThrow();
        long[] firstHashes = HASHER.seqHashes(chatIds(prefix + "Question 0?"));
        await().atMost(Duration.ofSeconds(20)).until(() -> matchedBlocks(worker, firstHashes) == firstHashes.length);
        // The prompts share the header, the prefix and "Question " (9 + prefix + 9 byte tokens).
        int sharedBlocks = (9 + prefix.length() + 9) / 16;
        for (int i = 1; i <= 3; i++) {
            awaitIndexerInUse();
            ClusterUnderTest.awaitRouterIdle();
            double overlapBefore = routerMetric("flotilla_router_overlap_blocks_sum");
            HttpResponse<String> next = chat(prefix + "Question " + i + "?");
            assertThat(next.statusCode()).isEqualTo(200);
            assertThat(next.headers().firstValue("x-flotilla-worker")).as("request %d", i).contains(worker);
            assertThat(routerMetric("flotilla_router_overlap_blocks_sum") - overlapBefore)
                    .as("the gateway's block hashes are the workers': the router saw the shared prefix cached")
                    .isGreaterThanOrEqualTo(sharedBlocks);
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
                awaitIndexerInUse();
                ClusterUnderTest.awaitRouterIdle();
                int[] prompt = Arrays.copyOf(prefix, prefix.length + 5);
                Arrays.fill(prompt, prefix.length, prompt.length, 250 + k);
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

    /**
     * Waits until the router's breaker in front of the indexer is closed. Right after start-up, cold
     * JVMs on a two-core machine can miss the FindMatches deadline a few times in a row; the breaker
     * then opens for two seconds and the router prices without the indexer (correctly, but these
     * tests are about what happens with its answer).
     */
    @Test
    @Order(5)
    void theOfficialSdkExamplesRunAgainstFakeVllmEnginesThatReceiveEverySamplingParameter() throws Exception {
        OpenAIClient client = ClusterUnderTest.sdkClient();
        try {
            SdkExamples.FunctionCalling run = SdkExamples.functionCalling(client, MODEL);
            assertThat(run.calls()).as("Llama 3 JSON calls, parsed by llama3-json")
                    .extracting(c -> c.function().arguments(SdkExamples.GetSdkQuality.class).name)
                    .containsExactly("OpenAI Java SDK", "Unknown Company SDK");
            assertThat(run.finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);
            assertThat(run.answer()).isEqualTo(SdkExamples.FINAL_ANSWER);

            ChatCompletion streamed = SdkExamples.streamingFunctionCalling(client, MODEL);
            assertThat(streamed.choices().get(0).message().toolCalls().orElseThrow()).hasSize(2);
            assertThat(streamed.choices().get(0).finishReason()).isEqualTo(ChatCompletion.Choice.FinishReason.TOOL_CALLS);

            assertThat(SdkExamples.structuredOutputs(client, MODEL)).extracting(b -> b.title).containsExactly("Beloved");
            tools.jackson.databind.JsonNode guided = requestsTo().stream().filter(r -> r.has("response_format"))
                    .reduce((a, b) -> b).orElseThrow();
            assertThat(guided.at("/response_format/type").asString()).isEqualTo("json_schema");
            assertThat(guided.at("/response_format/json_schema/schema/properties/books/type").asString()).isEqualTo("array");

            assertThat(SdkExamples.logprobs(client, MODEL)).as("the fake's three tokens, as vLLM reports them")
                    .hasSize(3).allSatisfy(t -> {
                        assertThat(t.logprob()).isEqualTo(-0.5);
                        assertThat(t.topLogprobs()).hasSize(2);
                    });
        } finally {
            client.close();
        }

        HttpResponse<String> sampled = post("/v1/chat/completions", JSON.readTree("""
                {"model": "%s", "max_tokens": 4, "messages": [{"role": "user", "content": "Every parameter, please"}],
                 "temperature": 0.4, "top_p": 0.5, "top_k": 20, "min_p": 0.1, "seed": 3, "presence_penalty": 0.3,
                 "frequency_penalty": 0.2, "repetition_penalty": 1.1, "logit_bias": {"65": 5}, "stop": ["zz"],
                 "stop_token_ids": [259], "logprobs": true, "top_logprobs": 2}""".formatted(MODEL)));
        assertThat(sampled.statusCode()).as(sampled.body()).isEqualTo(200);
        tools.jackson.databind.JsonNode body = engineOf(sampled).server().lastRequest();
        assertThat(body.path("temperature").asDouble()).isCloseTo(0.4, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(body.path("top_p").asDouble()).isEqualTo(0.5);
        assertThat(body.path("top_k").asInt()).isEqualTo(20);
        assertThat(body.path("min_p").asDouble()).isCloseTo(0.1, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(body.path("seed").asLong()).isEqualTo(3);
        assertThat(body.path("presence_penalty").asDouble()).isCloseTo(0.3, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(body.path("frequency_penalty").asDouble()).isCloseTo(0.2, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(body.path("repetition_penalty").asDouble()).isCloseTo(1.1, org.assertj.core.data.Offset.offset(1e-6));
        assertThat(body.path("logit_bias").path("65").asDouble()).isEqualTo(5.0);
        assertThat(body.path("stop").toString()).isEqualTo("[\"zz\"]");
        assertThat(body.path("stop_token_ids").toString()).contains("259");
        assertThat(body.path("logprobs").asInt()).isEqualTo(2);
        assertThat(body.path("return_tokens_as_token_ids").asBoolean()).isTrue();
    }

    @Test
    @Order(5)
    void theOfficialNodeSdkExamplesRunToo() throws Exception {
        ClusterUnderTest.runNodeSdkExamples(MODEL);
    }

    /** Every completions request the fake engines received, in arrival order per engine. */
    private static List<tools.jackson.databind.JsonNode> requestsTo() {
        List<tools.jackson.databind.JsonNode> out = new ArrayList<>();
        for (FakeVllmEngine e : engines) {
            out.addAll(e.server().requests());
        }
        return out;
    }

    /**
     * The fake engines play a Llama-3-style model for the SDK examples: JSON for a structured-output request,
     * the final answer once the tool results are in the prompt, two calls for the example's question; else their
     * fixed tokens. Token ids are bytes in this model's tokenizer.
     */
    static int[] modelAnswer(tools.jackson.databind.JsonNode request) {
        if (request.has("response_format")) {
            return byteIds(SdkExamples.BOOKS_JSON);
        }
        StringBuilder prompt = new StringBuilder();
        for (tools.jackson.databind.JsonNode id : request.path("prompt")) {
            if (id.asInt() < 256) {
                prompt.append((char) id.asInt());
            }
        }
        String text = new String(prompt.toString().getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8);
        if (text.contains(SdkExamples.TOOL_RESULT_MARK)) {
            return byteIds(SdkExamples.FINAL_ANSWER);
        }
        return text.contains(SdkExamples.QUESTION) ? byteIds(SdkExamples.CALLS_LLAMA3) : null;
    }

    private static int[] byteIds(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        int[] ids = new int[bytes.length];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = bytes[i] & 0xff;
        }
        return ids;
    }

    private static void awaitIndexerInUse() {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(200)).until(() ->
                JSON.readTree(ClusterUnderTest.get("http://127.0.0.1:" + Ports.ROUTER_MANAGEMENT + "/actuator/router"))
                        .at("/indexer/breaker").asText().equals("closed"));
    }

    private static FakeVllmEngine engineOf(HttpResponse<String> r) {
        String worker = r.headers().firstValue("x-flotilla-worker").orElseThrow();
        return engines[Integer.parseInt(worker.substring("worker-".length()))];
    }

    /** A request straight to worker n's WorkerService, so its engine caches {@code prompt}. */
    private static void generateOn(int n, int[] prompt) {
        ManagedChannel ch = NettyChannelBuilder.forAddress("127.0.0.1", Ports.workerGrpc(n)).usePlaintext().build();
        try {
            GenerateRequest.Builder r = GenerateRequest.newBuilder().setRequestId("e2e-" + n + "-" + System.nanoTime())
                    .setModel(MODEL).setStop(StopConditions.newBuilder().setMaxTokens(2));
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
        return ClusterUnderTest.matchedBlocks(indexer, MODEL, worker, hashes);
    }

    /** Sum of a counter's samples on worker n's Prometheus endpoint. */
    private static double workerMetric(int n, String name) throws Exception {
        return metric(Ports.workerManagement(n), name);
    }

    private static double routerMetric(String name) throws Exception {
        return metric(Ports.ROUTER_MANAGEMENT, name);
    }

    private static double metric(int managementPort, String name) throws Exception {
        double sum = 0;
        boolean found = false;
        for (String line : ClusterUnderTest.prometheus(managementPort).split("\n")) {
            if (line.startsWith(name + "{") || line.startsWith(name + " ")) {
                sum += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
                found = true;
            }
        }
        assertThat(found).as("%s on port %d", name, managementPort).isTrue();
        return sum;
    }

    private static HttpResponse<String> chat(String content) throws Exception {
        return post("/v1/chat/completions", JSON.createObjectNode().put("model", MODEL).put("max_tokens", 8)
                .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", content))));
    }

    private static HttpResponse<String> complete(int[] prompt) throws Exception {
        ArrayNode ids = JSON.createArrayNode();
        Arrays.stream(prompt).forEach(ids::add);
        return post("/v1/completions", JSON.createObjectNode().put("model", MODEL).put("max_tokens", 8).set("prompt", ids));
    }

    private static HttpResponse<String> post(String path, JsonNode body) throws Exception {
        return HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + path))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    /** Byte token ids (below the model's vocabulary), distinct per salt. */
    private static int[] tokens(int n, int salt) {
        int[] out = new int[n];
        for (int i = 0; i < n; i++) {
            out[i] = Math.floorMod(salt * 7919 + i * 131, 256);
        }
        return out;
    }

    /** The ids of a one-message chat: the template below, rendered, then one id per special token or byte. */
    private static int[] chatIds(String userMessage) {
        List<Integer> ids = new ArrayList<>();
        ids.add(256); // <|begin_of_text|>
        ids.add(257); // <|start_header_id|>
        bytes(ids, "user");
        ids.add(258); // <|end_header_id|>
        bytes(ids, "\n\n" + userMessage);
        ids.add(259); // <|eot_id|>
        ids.add(257);
        bytes(ids, "assistant");
        ids.add(258);
        bytes(ids, "\n\n");
        return ids.stream().mapToInt(Integer::intValue).toArray();
    }

    private static void bytes(List<Integer> ids, String text) {
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            ids.add(b & 0xFF);
        }
    }

    /**
     * A HuggingFace model directory in real format: {@code tokenizer.json} is GPT-2 byte-level BPE with the 256
     * byte symbols as ids 0-255 and no merges, plus four special tokens; {@code tokenizer_config.json} has
     * {@code name_or_path}, the special tokens and a chat template shaped like Llama 3's.
     */
    private static Path writeModelDir(Path dir) throws Exception {
        Files.createDirectories(dir);
        var root = JSON.createObjectNode();
        root.put("version", "1.0");
        root.putNull("truncation");
        root.putNull("padding");
        ArrayNode added = root.putArray("added_tokens");
        for (int i = 0; i < SPECIAL.size(); i++) {
            added.addObject().put("id", 256 + i).put("content", SPECIAL.get(i)).put("single_word", false)
                    .put("lstrip", false).put("rstrip", false).put("normalized", false).put("special", true);
        }
        root.putNull("normalizer");
        root.putObject("pre_tokenizer").put("type", "ByteLevel").put("add_prefix_space", false)
                .put("trim_offsets", true).put("use_regex", true);
        root.putNull("post_processor");
        root.putObject("decoder").put("type", "ByteLevel").put("add_prefix_space", true)
                .put("trim_offsets", true).put("use_regex", true);
        var model = root.putObject("model");
        model.put("type", "BPE").putNull("dropout").putNull("unk_token").putNull("continuing_subword_prefix")
                .putNull("end_of_word_suffix").put("fuse_unk", false).put("byte_fallback", false).put("ignore_merges", false);
        var vocab = model.putObject("vocab");
        int next = 0;
        for (int b = 0; b < 256; b++) { // GPT-2's bytes_to_unicode
            boolean printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
            vocab.put(String.valueOf((char) (printable ? b : 256 + next++)), b);
        }
        model.putArray("merges");
        Files.writeString(dir.resolve("tokenizer.json"), JSON.writeValueAsString(root));

        var config = JSON.createObjectNode();
        config.put("name_or_path", TOKENIZER_ID);
        config.put("bos_token", "<|begin_of_text|>");
        config.put("eos_token", "<|eot_id|>");
        // Llama 3.1's shape, tools included: the tools in a system turn, calls as {"name", "parameters"}, results as ipython.
        config.put("chat_template", "{{ bos_token }}{% if tools %}{{ '<|start_header_id|>system<|end_header_id|>\\n\\n"
                + "Answer with a JSON function call naming one of these functions:\\n' }}"
                + "{% for t in tools %}{{ t | tojson }}{{ '\\n' }}{% endfor %}{{ '<|eot_id|>' }}{% endif %}"
                + "{% for m in messages %}{% if m['role'] == 'tool' %}"
                + "{{ '<|start_header_id|>ipython<|end_header_id|>\\n\\n' + m['content'] + '<|eot_id|>' }}"
                + "{% elif m['tool_calls'] is defined %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}"
                + "{% for c in m['tool_calls'] %}{{ '{\"name\": \"' + c['function']['name'] + '\", \"parameters\": ' }}"
                + "{{ c['function']['arguments'] | tojson }}{{ '}' }}{% endfor %}{{ '<|eot_id|>' }}"
                + "{% else %}{{ '<|start_header_id|>' + m['role']"
                + " + '<|end_header_id|>\\n\\n' + m['content'] + '<|eot_id|>' }}{% endif %}{% endfor %}"
                + "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{% endif %}");
        Files.writeString(dir.resolve("tokenizer_config.json"), JSON.writeValueAsString(config));
        assertThat(vocab.size() + SPECIAL.size()).isEqualTo(VOCAB);
        return dir;
    }
}
