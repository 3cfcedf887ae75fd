package io.flotilla.gateway.tokenize;

import io.flotilla.gateway.fakes.FakeRouter;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.fakes.Sse;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.webtestclient.autoconfigure.AutoConfigureWebTestClient;
import org.springframework.http.MediaType;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The gateway with models configured by model directory ({@code models.<m>.model-dir}): a chat request
 * is rendered with the directory's Jinja template and tokenized by its {@code tokenizer.json} (the
 * worker receives exactly those ids, and {@code usage.prompt_tokens} counts them), blocks are hashed in
 * the namespace of the configured tokenizer id, and the worker's ids stream back as text without a
 * split character. The model directories hold {@link TinyTokenizers#byteLevel()} and the real
 * Qwen2.5, Llama 3.2 and Mistral 7B templates; one fake router and worker serve them.
 */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
        "management.server.port=0",
        "flotilla.gateway.records.enabled=false",
        "flotilla.gateway.route-deadline.floor=10s",
        "flotilla.gateway.route-deadline.ceiling=10s",
        "flotilla.gateway.router-call-timeout=10s",
        "flotilla.gateway.models.qwen-tiny.tokenizer=Qwen/Qwen2.5-7B-Instruct",
})
@AutoConfigureWebTestClient(timeout = "60s")
class HfModelEndToEndTest {

    static final String GENERATED = "Héllo 😀 world";
    static final Path MODELS = tempDir();
    static final Path QWEN = TinyTokenizers.modelDir(MODELS.resolve("qwen"), "/models/qwen2.5-7b-instruct");
    static final Path LLAMA = TinyTokenizers.modelDir(MODELS.resolve("llama"), "/models/llama-3.2-3b-instruct");
    static final Path MISTRAL = TinyTokenizers.modelDir(MODELS.resolve("mistral"), "/models/mistral-7b-instruct-v0.1");
    static final HfTokenizer TOKENIZER = HfTokenizer.load("reference", QWEN.resolve("tokenizer.json"));
    static final int[] SCRIPT = TOKENIZER.encode(GENERATED);

    static final FakeWorker worker = new FakeWorker("hf-worker", SCRIPT, new ConcurrentHashMap<>());
    static final GrpcEndpoint workerEndpoint = new GrpcEndpoint("fake-hf-worker", "127.0.0.1", 0, List.of(worker)).start();
    static final FakeRouter router = new FakeRouter(List.of(served("qwen-tiny"), served("llama-tiny"), served("mistral-tiny")),
            r -> RouteDecision.newBuilder().setWorkerId(worker.id()).setWorkerEndpoint(address(workerEndpoint)).build());
    static final GrpcEndpoint routerEndpoint = new GrpcEndpoint("fake-hf-router", "127.0.0.1", 0, List.of(router)).start();

    @Autowired
    WebTestClient web;

    @DynamicPropertySource
    static void properties(DynamicPropertyRegistry registry) {
        registry.add("flotilla.gateway.router-address", () -> address(routerEndpoint));
        registry.add("flotilla.gateway.models.qwen-tiny.model-dir", QWEN::toString);
        registry.add("flotilla.gateway.models.llama-tiny.model-dir", LLAMA::toString);
        registry.add("flotilla.gateway.models.mistral-tiny.model-dir", MISTRAL::toString);
    }

    @BeforeEach
    void reset() {
        worker.clearRecords();
        router.clearRecords();
    }

    @AfterAll
    static void stop() throws IOException {
        routerEndpoint.close();
        workerEndpoint.close();
        TOKENIZER.close();
        try (var files = Files.walk(MODELS)) {
            for (Path p : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.delete(p);
            }
        }
    }

    @Test
    void chatIsRenderedWithTheModelsTemplateAndTokenizedByItsTokenizerJson() {
        JsonNode body = Sse.json(post("/v1/chat/completions", """
                {"model":"qwen-tiny","max_tokens":%d,"messages":[
                 {"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"Héllo 😀"}]}"""
                .formatted(SCRIPT.length)));

        int[] expected = TOKENIZER.encode("<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
                + "<|im_start|>user\nHéllo 😀<|im_end|>\n<|im_start|>assistant\n");
        GenerateRequest sent = worker.generates.get(0);
        assertThat(sent.getTokenIdsList()).containsExactly(boxed(expected));
        assertThat(body.get("usage").get("prompt_tokens").intValue()).isEqualTo(expected.length);
        int imStart = TinyTokenizers.BEGIN_OF_TEXT + TinyTokenizers.SPECIAL.indexOf("<|im_start|>");
        assertThat(Arrays.stream(expected).filter(id -> id == imStart).count()).isEqualTo(3); // one id per marker
        assertThat(body.get("choices").get(0).get("message").get("content").stringValue()).isEqualTo(GENERATED);

        RouteRequest route = router.routesOf(sent.getRequestId()).get(0);
        long[] hashes = new BlockHasher(KvNamespace.of("qwen-tiny", "Qwen/Qwen2.5-7B-Instruct", "bf16/bs16/paged"), 16)
                .seqHashes(expected);
        assertThat(route.getSeqHashesList()).containsExactly(Arrays.stream(hashes).boxed().toArray(Long[]::new));
    }

    @Test
    void streamedTextNeverSplitsACharacter() {
        List<JsonNode> chunks = Sse.chunks(post("/v1/chat/completions", """
                {"model":"qwen-tiny","max_tokens":%d,"stream":true,"stream_options":{"include_usage":true},
                 "messages":[{"role":"user","content":"hi"}]}""".formatted(SCRIPT.length)));

        StringBuilder text = new StringBuilder();
        for (JsonNode chunk : chunks) {
            if (!chunk.get("choices").isEmpty() && chunk.get("choices").get(0).get("delta").has("content")) {
                String delta = chunk.get("choices").get(0).get("delta").get("content").stringValue();
                assertThat(delta).doesNotContain("\uFFFD");
                text.append(delta);
            }
        }
        assertThat(text.toString()).isEqualTo(GENERATED);
        int promptTokens = worker.generates.get(0).getTokenIdsCount();
        assertThat(chunks.get(chunks.size() - 1).get("usage").get("prompt_tokens").intValue()).isEqualTo(promptTokens);
        assertThat(promptTokens).isEqualTo(TOKENIZER.encode("<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. "
                + "You are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n").length);
    }

    @Test
    void bosOnceForChatsAndAddedToTextCompletions() {
        post("/v1/chat/completions", """
                {"model":"llama-tiny","max_tokens":1,"messages":[{"role":"user","content":"Hello world"}]}""");
        List<Integer> chat = worker.generates.get(0).getTokenIdsList();
        assertThat(chat.get(0)).isEqualTo(TinyTokenizers.BEGIN_OF_TEXT); // written by the template, not added again
        assertThat(chat.stream().filter(id -> id == TinyTokenizers.BEGIN_OF_TEXT).count()).isEqualTo(1);

        post("/v1/completions", """
                {"model":"llama-tiny","max_tokens":1,"prompt":"Hello world"}""");
        assertThat(worker.generates.get(1).getTokenIdsList()).containsExactly(TinyTokenizers.BEGIN_OF_TEXT, 259, 264);
    }

    @Test
    void aConversationTheTemplateRejectsIs400() {
        JsonNode error = Sse.json(web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("""
                        {"model":"mistral-tiny","messages":[{"role":"system","content":"Be brief."},
                         {"role":"user","content":"hi"}]}""")
                .exchange().expectStatus().isBadRequest().expectBody(byte[].class).returnResult().getResponseBody())
                .get("error");
        assertThat(error.get("type").stringValue()).isEqualTo("invalid_request_error");
        assertThat(error.get("param").stringValue()).isEqualTo("messages");
        assertThat(error.get("message").stringValue()).contains("Conversation roles must alternate");
        assertThat(worker.generates).isEmpty();
    }

    private byte[] post(String uri, String body) {
        return web.post().uri(uri).contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(byte[].class).returnResult().getResponseBody();
    }

    private static Integer[] boxed(int[] ids) {
        return Arrays.stream(ids).boxed().toArray(Integer[]::new);
    }

    private static WorkerInfo served(String model) {
        return WorkerInfo.newBuilder().setWorkerId(worker.id()).setModel(model).setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                .setState(WorkerState.WORKER_STATE_READY).setEndpoint(address(workerEndpoint)).setBlockSize(16)
                .setRoutable(true).setCapabilities(io.flotilla.gateway.fakes.FakeCluster.CAPABILITIES).build();
    }

    private static String address(GrpcEndpoint endpoint) {
        return "127.0.0.1:" + endpoint.port();
    }

    private static Path tempDir() {
        try {
            return Files.createTempDirectory("hf-models");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
