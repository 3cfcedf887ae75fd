package io.flotilla.router.epp;

import io.flotilla.router.core.RouterDefaults;
import io.envoyproxy.envoy.config.core.v3.HeaderValueOption;
import io.envoyproxy.envoy.service.ext_proc.v3.ProcessingResponse;
import io.flotilla.gateway.tokenize.ChatMessage;
import io.flotilla.gateway.tokenize.ChatMlTemplate;
import io.flotilla.gateway.tokenize.Cl100kTokenizer;
import io.flotilla.gateway.tokenize.ModelTokenization;
import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.hash.BlockHasher;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerMatch;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.service.RequestRouter;
import io.flotilla.router.service.RouterMetrics;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.apache.kafka.clients.producer.MockProducer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.util.unit.DataSize;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The router's endpoint picker driven as Envoy's ext_proc filter drives it (FULL_DUPLEX_STREAMED, the
 * Gateway API Inference Extension's mode), over real gRPC with Envoy's published protos: the router's
 * own request path behind it (RequestRouter, BookingLedger, the indexer client) with three simulated
 * workers' registrations and an indexer over gRPC that answers from the blocks the test says a worker holds.
 */
class EppConformanceTest {

    static final String MODEL = "flotilla-sim";
    static final int BLOCK = 16;
    static final List<String> WORKERS = List.of("w0", "w1", "w2");
    /** The prompt hashing of the gateway path: ChatML + cl100k_base in the workers' namespace. */
    static final Cl100kTokenizer CL100K = new Cl100kTokenizer();
    static final ModelTokenization GATEWAY = new ModelTokenization(CL100K, new ChatMlTemplate());
    /** The picker's tokenizers, built once: loading cl100k_base is the slowest step of a start. */
    static final io.flotilla.gateway.tokenize.ModelTokenizations TOKENIZATIONS = new io.flotilla.gateway.tokenize.ModelTokenizations(
            Map.of(), Map.of(Cl100kTokenizer.ID, CL100K), Map.of(ChatMlTemplate.ID, new ChatMlTemplate()), Clock.systemUTC());
    static final BlockHasher HASHER = new BlockHasher(KvNamespace.of(MODEL, Cl100kTokenizer.ID, "bf16/bs16/paged"), BLOCK);

    final FakeIndexer index = new FakeIndexer();
    GrpcEndpoint indexerServer;
    IndexerClient indexer;
    RequestRouter router;
    GrpcEndpoint epp;
    ManagedChannel channel;

    /** An indexer that reports, per worker, the leading blocks of a request the test said it holds. */
    static final class FakeIndexer extends IndexerServiceGrpc.IndexerServiceImplBase {
        final Map<String, Set<Long>> held = new ConcurrentHashMap<>();
        final AtomicReference<List<Long>> lastAsked = new AtomicReference<>(List.of());

        @Override
        public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
            lastAsked.set(List.copyOf(request.getSeqHashesList()));
            FindMatchesResponse.Builder b = FindMatchesResponse.newBuilder();
            held.forEach((worker, blocks) -> {
                int n = 0;
                while (n < request.getSeqHashesCount() && blocks.contains(request.getSeqHashes(n))) {
                    n++;
                }
                if (n > 0) {
                    b.addMatches(WorkerMatch.newBuilder().setWorkerId(worker).setMatchedBlocks(n).setPrefixDeviceBlocks(n));
                }
            });
            observer.onNext(b.build());
            observer.onCompleted();
        }
    }

    @BeforeEach
    void start() {
        indexerServer = new GrpcEndpoint("fake-indexer", "127.0.0.1", 0, List.of(index)).start();
        indexer = new IndexerClient("127.0.0.1:" + indexerServer.port(), Duration.ofSeconds(2));
        RouterConfig config = RouterDefaults.config();
        router = new RequestRouter(config, new WorkerDirectory(), BookingLedger.create("epp-test", config), indexer,
                new MockProducer<>(true, null, new StringSerializer(), (topic, value) -> new byte[0]),
                new RouterMetrics(new SimpleMeterRegistry()), Clock.systemUTC(), new SplittableRandom(7), "epp-test");
        for (int i = 0; i < WORKERS.size(); i++) {
            router.onStatus(WorkerStatus.newBuilder().setWorkerId(WORKERS.get(i)).setEpoch(i + 1)
                    .setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setModel(MODEL).setState(WorkerState.WORKER_STATE_READY)
                    .setEndpoint("10.0.0." + (i + 1) + ":7100").setBlockSize(BLOCK).setKvLayout("bf16/bs16/paged")
                    .setLeaseMs(600_000).setTokenizerId(Cl100kTokenizer.ID).setTokenizerSource("builtin:cl100k_base")
                    .setCapacity(WorkerCapacity.newBuilder().setTotalKvBlocks(8192)).build());
        }
        epp(settings("FailClose", DataSize.ofKilobytes(64)));
    }

    static EppSettings settings(String failureMode, DataSize maxBody) {
        return new EppSettings(true, 0, 8000, failureMode, maxBody, 2, 16, Map.of("critical", 10, "batch", -1));
    }

    void epp(EppSettings settings) {
        stopEpp();
        epp = new GrpcEndpoint("epp", "127.0.0.1", 0,
                List.of(new ExtProcService(new EndpointPicker(router, TOKENIZATIONS, settings), settings))).start();
        channel = NettyChannelBuilder.forAddress("127.0.0.1", epp.port()).usePlaintext().build();
    }

    void stopEpp() {
        if (channel != null) {
            channel.shutdownNow();
        }
        if (epp != null) {
            epp.close();
        }
    }

    @AfterEach
    void stop() {
        stopEpp();
        router.close();
        indexer.close();
        indexerServer.close();
    }

    static String chat(String system, String user, String extra) {
        return "{\"model\":\"" + MODEL + "\",\"stream\":true,\"max_tokens\":32" + extra + ",\"messages\":["
                + "{\"role\":\"system\",\"content\":\"" + system + "\"},"
                + "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"" + user + "\"}]}]}";
    }

    static long[] gatewayHashes(String system, String user) {
        return HASHER.seqHashes(GATEWAY.chatPrompt(List.of(new ChatMessage("system", null, system),
                new ChatMessage("user", null, user))));
    }

    /** A system prompt of about {@code words} tokens, different for each {@code seed}. */
    static String longPrefix(int seed, int words) {
        StringBuilder b = new StringBuilder("You are assistant number " + seed + ".");
        for (int i = 0; i < words; i++) {
            b.append(' ').append("rule").append(seed).append('-').append(i);
        }
        return b.toString();
    }

    static Map<String, String> setHeaders(ProcessingResponse r) {
        Map<String, String> out = new HashMap<>();
        List<HeaderValueOption> set = r.getRequestHeaders().getResponse().getHeaderMutation().getSetHeadersList();
        set.forEach(h -> out.put(h.getHeader().getKey(), h.getHeader().getRawValue().toStringUtf8()));
        return out;
    }

    static String metadataDestination(ProcessingResponse r) {
        var ns = r.getDynamicMetadata().getFieldsMap().get(ExtProcStream.LB_NAMESPACE);
        return ns == null ? null : ns.getStructValue().getFieldsOrThrow(ExtProcStream.DESTINATION).getStringValue();
    }

    /** The streamed request body the picker sends back, read to its end_of_stream. */
    static String bodyEcho(EnvoyClient envoy) throws InterruptedException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        while (true) {
            ProcessingResponse r = envoy.next();
            assertThat(r.hasRequestBody()).as("request body responses follow the headers response").isTrue();
            var streamed = r.getRequestBody().getResponse().getBodyMutation().getStreamedResponse();
            out.writeBytes(streamed.getBody().toByteArray());
            if (streamed.getEndOfStream()) {
                return out.toString(StandardCharsets.UTF_8);
            }
        }
    }

    boolean booked(String requestId) {
        return router.ledger().sequences().contains(requestId);
    }

    @Test
    void aChatBodyInChunksGetsItsEndpointFallbacksAndMetadataHashedAsTheGatewayHashes() throws Exception {
        String system = longPrefix(1, 120);
        String body = chat(system, "What is the capital of France?", "");
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of("x-request-id", "req-1"), null).body(body, 4);
            ProcessingResponse headers = envoy.next();
            assertThat(headers.hasRequestHeaders()).isTrue();
            assertThat(headers.getRequestHeaders().getResponse().getClearRouteCache()).isTrue();
            String destination = setHeaders(headers).get(ExtProcStream.DESTINATION);
            assertThat(destination).as("header and metadata carry one value").isEqualTo(metadataDestination(headers));
            List<String> endpoints = Arrays.asList(destination.split(","));
            assertThat(endpoints).as("the pick, then two fallbacks, each the worker's host and the pool's target port")
                    .hasSize(3).doesNotHaveDuplicates()
                    .allSatisfy(e -> assertThat(e).matches("10\\.0\\.0\\.[123]:8000"));
            assertThat(bodyEcho(envoy)).as("the body goes on unchanged").isEqualTo(body);

            assertThat(index.lastAsked.get()).as("the prompt hashed exactly as the gateway hashes it")
                    .containsExactlyElementsOf(Arrays.stream(gatewayHashes(system, "What is the capital of France?")).boxed().toList())
                    .hasSizeGreaterThan(20);
            assertThat(booked("req-1")).isTrue();
            String chosen = router.ledger().sequences().loads().keySet().iterator().next();
            assertThat(endpoints.get(0)).isEqualTo("10.0.0." + (WORKERS.indexOf(chosen) + 1) + ":8000");

            envoy.responseHeaders();
            assertThat(envoy.next().hasResponseHeaders()).isTrue();
            envoy.responseBody("data: {\"choices\":[]}\n\n", false);
            assertThat(envoy.next().getResponseBody().getResponse().getBodyMutation().getStreamedResponse().getBody()
                    .toStringUtf8()).as("response chunks are streamed back as they came").contains("choices");
            assertThat(booked("req-1")).as("booked until the response ends").isTrue();
            envoy.responseBody("data: [DONE]\n\n", true);
            assertThat(envoy.next().getResponseBody().getResponse().getBodyMutation().getStreamedResponse().getEndOfStream()).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> !booked("req-1"));
        }
    }

    @Test
    void aRepeatedLongPrefixPicksThePodHoldingIt() throws Exception {
        // Each long prefix is held by a worker the test chooses (as if it had served it before); a request
        // that repeats the prefix with a new question must go there, whichever worker a cold pick prefers.
        Map<String, String> holderOf = Map.of("w2", longPrefix(21, 150), "w0", longPrefix(22, 150), "w1", longPrefix(23, 150));
        List<String> holders = List.of("w2", "w0", "w1", "w2");
        List<String> expected = List.of("10.0.0.3:8000", "10.0.0.1:8000", "10.0.0.2:8000", "10.0.0.3:8000");
        assertThat(serveInTurn("cold-", holders, holderOf)).as("self-check: with nothing in the index, the cold picks"
                + " are not the holders, so the check below can fail").isNotEqualTo(expected);
        for (String holder : holders) {
            Arrays.stream(gatewayHashes(holderOf.get(holder), "an earlier question")).limit(150 / BLOCK)
                    .forEach(index.held.computeIfAbsent(holder, k -> ConcurrentHashMap.newKeySet())::add);
        }
        assertThat(serveInTurn("sticky-", holders, holderOf)).isEqualTo(expected);
    }

    /** Sends a new question after each holder's prefix, serves each request to its end, and returns the picks. */
    private List<String> serveInTurn(String idPrefix, List<String> holders, Map<String, String> holderOf) throws Exception {
        List<String> picked = new ArrayList<>();
        int n = 0;
        for (String holder : holders) {
            try (EnvoyClient envoy = new EnvoyClient(channel)) {
                String id = idPrefix + n++;
                envoy.headers("/v1/chat/completions", Map.of("x-request-id", id), null)
                        .body(chat(holderOf.get(holder), "A new question, number " + n + "?", ""), 3);
                String destination = setHeaders(envoy.next()).get(ExtProcStream.DESTINATION);
                picked.add(destination.split(",")[0]);
                bodyEcho(envoy);
                envoy.responseHeaders().next();
                envoy.responseBody("data: [DONE]\n\n", true).next();
                await().atMost(Duration.ofSeconds(5)).until(() -> !booked(id));
            }
        }
        return picked;
    }

    @Test
    void bookingsEndWithResponseTrailersAndWithAResetMidStream() throws Exception {
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/completions", Map.of("x-request-id", "trailers"), null)
                    .body("{\"model\":\"" + MODEL + "\",\"prompt\":\"" + longPrefix(3, 40) + "\"}", 2);
            assertThat(setHeaders(envoy.next())).containsKey(ExtProcStream.DESTINATION);
            bodyEcho(envoy);
            assertThat(booked("trailers")).isTrue();
            envoy.responseHeaders().next();
            envoy.responseTrailers();
            assertThat(envoy.next().hasResponseTrailers()).isTrue();
            await().atMost(Duration.ofSeconds(5)).until(() -> !booked("trailers"));
        }
        EnvoyClient envoy = new EnvoyClient(channel);
        envoy.headers("/v1/chat/completions", Map.of("x-request-id", "reset"), null).body(chat(longPrefix(4, 60), "hi", ""), 3);
        assertThat(setHeaders(envoy.next())).containsKey(ExtProcStream.DESTINATION);
        bodyEcho(envoy);
        envoy.responseHeaders().next();
        envoy.responseBody("data: {}\n\n", false).next();
        assertThat(booked("reset")).isTrue();
        envoy.reset(); // the client went away while tokens were streaming
        await().atMost(Duration.ofSeconds(5)).until(() -> !booked("reset"));
        assertThat(router.ledger().sequences().size()).isZero();
    }

    @Test
    void aBodyOverTheLimitIs413AndBooksNothing() throws Exception {
        epp(settings("FailClose", DataSize.ofBytes(2048)));
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of("x-request-id", "big"), null)
                    .body(chat(longPrefix(5, 400), "too long", ""), 5);
            ProcessingResponse r = envoy.next();
            assertThat(r.hasImmediateResponse()).isTrue();
            assertThat(r.getImmediateResponse().getStatus().getCodeValue()).isEqualTo(413);
            assertThat(r.getImmediateResponse().getBody().toStringUtf8()).contains("request_too_large");
            assertThat(envoy.poll(200)).as("nothing after the immediate response").isNull();
        }
        assertThat(router.ledger().sequences().size()).isZero();
    }

    @Test
    void noEligibleEndpointFailsClosedWith503() throws Exception {
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of(), null).body(chat("s", "u", "").replace(MODEL, "no-such-model"), 2);
            ProcessingResponse r = envoy.next();
            assertThat(r.getImmediateResponse().getStatus().getCodeValue()).isEqualTo(503);
        }
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of(), List.of("10.9.9.9:8000")).body(chat("s", "u", ""), 2);
            assertThat(envoy.next().getImmediateResponse().getStatus().getCodeValue())
                    .as("a subset hint naming no live worker is 503 whatever the failure mode").isEqualTo(503);
        }
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of(), List.of("10.0.0.2:8000")).body(chat(longPrefix(6, 30), "u", ""), 2);
            assertThat(setHeaders(envoy.next()).get(ExtProcStream.DESTINATION))
                    .as("a subset hint limits the pick and its fallbacks").isEqualTo("10.0.0.2:8000");
        }
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of(), null).body("{\"messages\": 3}", 1);
            assertThat(envoy.next().getImmediateResponse().getStatus().getCodeValue()).isEqualTo(400);
        }
    }

    @Test
    void noEligibleEndpointFailsOpenWithoutADestination() throws Exception {
        epp(settings("FailOpen", DataSize.ofKilobytes(64)));
        String body = chat("s", "u", "").replace(MODEL, "no-such-model");
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of(), null).body(body, 2);
            ProcessingResponse r = envoy.next();
            assertThat(r.hasRequestHeaders()).isTrue();
            assertThat(setHeaders(r)).doesNotContainKey(ExtProcStream.DESTINATION).containsKey(ExtProcStream.FAIL_OPEN);
            assertThat(metadataDestination(r)).isNull();
            assertThat(bodyEcho(envoy)).isEqualTo(body);
        }
        assertThat(router.ledger().sequences().size()).isZero();
    }

    @Test
    void whenEveryWorkerIsBusyASheddableObjectiveIs429AndOthersFollowTheFailureMode() throws Exception {
        for (int i = 0; i < WORKERS.size(); i++) {
            router.onLoad(WorkerLoad.newBuilder().setWorkerId(WORKERS.get(i)).setEpoch(i + 1)
                    .setActiveKvBlocks(8100).setTotalKvBlocks(8192).build());
        }
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of("x-gateway-inference-objective", "batch"), null)
                    .body(chat(longPrefix(7, 30), "u", ""), 2);
            var r = envoy.next().getImmediateResponse();
            assertThat(r.getStatus().getCodeValue()).isEqualTo(429);
            assertThat(r.getHeaders().getSetHeadersList()).anyMatch(h -> h.getHeader().getKey().equals("retry-after"));
        }
        epp(settings("FailOpen", DataSize.ofKilobytes(64)));
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of("x-gateway-inference-objective", "batch"), null)
                    .body(chat(longPrefix(7, 30), "u", ""), 2);
            assertThat(envoy.next().getImmediateResponse().getStatus().getCodeValue())
                    .as("sheddable is dropped even when the pool fails open").isEqualTo(429);
        }
        try (EnvoyClient envoy = new EnvoyClient(channel)) {
            envoy.headers("/v1/chat/completions", Map.of("x-gateway-inference-objective", "critical"), null)
                    .body(chat(longPrefix(7, 30), "u", ""), 2);
            assertThat(setHeaders(envoy.next())).containsKey(ExtProcStream.FAIL_OPEN);
        }
    }
}
