package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.config.GatewayInstance;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.fakes.Sse;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.GatewayModelLoad;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.grpc.Status;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.web.reactive.function.client.WebClient;
import tools.jackson.databind.JsonNode;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** Routing outcomes, worker failures and migration, client disconnects. */
class RequestPathTest extends GatewayTestBase {

    @Autowired
    GatewayInstance instance;

    private static final String CHAT = """
            {"messages":[{"role":"user","content":"tell me"}],"max_tokens":%d,"stream":%s,
             "stream_options":%s}""";

    private static String chat(int maxTokens, boolean stream) {
        return CHAT.formatted(maxTokens, stream, stream ? "{\"include_usage\":true}" : "null");
    }

    private EntityExchangeResult<byte[]> postOk(String body) {
        return web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(body)
                .exchange().expectStatus().isOk().expectBody(byte[].class).returnResult();
    }

    private static String content(List<JsonNode> chunks) {
        StringBuilder sb = new StringBuilder();
        for (JsonNode c : chunks) {
            if (c.has("choices") && !c.get("choices").isEmpty() && c.get("choices").get(0).get("delta").has("content")) {
                sb.append(c.get("choices").get(0).get("delta").get("content").stringValue());
            }
        }
        return sb.toString();
    }

    @Test
    void aWorkerDyingMidStreamIsInvisibleToTheClient() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(3, Status.UNAVAILABLE));
        EntityExchangeResult<byte[]> result = postOk(chat(12, true));

        List<JsonNode> chunks = Sse.chunks(result.getResponseBody());
        assertThat(content(chunks)).isEqualTo(FakeCluster.expectedText(12));
        JsonNode usage = chunks.get(chunks.size() - 1).get("usage");
        assertThat(usage.get("completion_tokens").intValue()).isEqualTo(12);
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.WORKER)).isEqualTo("worker-a");
        assertThat(chunks).noneMatch(c -> c.has("error"));

        GenerateRequest onA = cluster.workerA.generates.get(0);
        GenerateRequest onB = cluster.workerB.generates.get(0);
        String id = onA.getRequestId();
        assertThat(onB.getRequestId()).isEqualTo(id);
        List<Integer> continued = new ArrayList<>(onA.getTokenIdsList());
        for (int i = 0; i < 3; i++) {
            continued.add(FakeCluster.SCRIPT[i]);
        }
        assertThat(onB.getTokenIdsList()).as("prompt + the 3 tokens already sent").isEqualTo(continued);
        assertThat(onB.getStop().getMaxTokens()).isEqualTo(9);
        List<RouteRequest> routes = cluster.router.routesOf(id);
        assertThat(routes).hasSize(2);
        assertThat(routes.get(1).getExcludeList()).containsExactly("worker-a");
        assertThat(routes.get(1).getIsl()).isEqualTo(continued.size());
        assertThat(routes.get(1).getOsl()).isEqualTo(9);
        assertThat(cluster.router.failures).singleElement()
                .satisfies(f -> assertThat(f.getWorkerId()).isEqualTo("worker-a"));
        await().atMost(WAIT).until(() -> cluster.records.of(id).isPresent());
        var record = cluster.records.of(id).orElseThrow();
        assertThat(record.getMigrations()).isEqualTo(1);
        assertThat(record.getWorker()).isEqualTo("worker-b");
        assertThat(record.getOsl()).isEqualTo(12);
        assertThat(record.getOutcome()).isEqualTo(RequestOutcome.REQUEST_OUTCOME_OK);
        await().atMost(WAIT).until(() -> cluster.router.releases.stream().filter(id::equals).count() == 2);
    }

    @Test
    void migrationAlsoWorksForWholeResponses() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(5, Status.INTERNAL));
        JsonNode body = Sse.json(postOk(chat(8, false)).getResponseBody());
        assertThat(body.get("choices").get(0).get("message").get("content").stringValue()).isEqualTo(FakeCluster.expectedText(8));
        assertThat(body.get("usage").get("completion_tokens").intValue()).isEqualTo(8);
    }

    @Test
    void aWorkerFailingBeforeItsFirstTokenIsReplacedAndTheHeaderNamesTheReplacement() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(0, Status.UNAVAILABLE));
        EntityExchangeResult<byte[]> result = postOk(chat(4, true));
        assertThat(result.getResponseHeaders().getFirst(ResponseHeaders.WORKER)).isEqualTo("worker-b");
        assertThat(content(Sse.chunks(result.getResponseBody()))).isEqualTo(FakeCluster.expectedText(4));
    }

    @Test
    void aFullWorkerIsAvoidedButNotReportedAsFailed() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(0, Status.RESOURCE_EXHAUSTED));
        postOk(chat(4, false));
        assertThat(cluster.workerB.generates).hasSize(1);
        assertThat(cluster.router.failures).isEmpty();
    }

    @Test
    void aWorkerThatDiesAfterItsLastTokenNeedsNoMigration() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(6, Status.UNAVAILABLE));
        JsonNode body = Sse.json(postOk(chat(6, false)).getResponseBody());
        assertThat(body.get("choices").get(0).get("message").get("content").stringValue()).isEqualTo(FakeCluster.expectedText(6));
        assertThat(body.get("choices").get(0).get("finish_reason").stringValue()).isEqualTo("length");
        assertThat(cluster.workerB.generates).isEmpty();
    }

    @Test
    void whenEveryWorkerFailsAfterTheStreamStartedTheErrorIsAnSseEventBeforeDone() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(2, Status.UNAVAILABLE));
        cluster.workerB.behave(FakeWorker.Behaviour.failAfter(2, Status.UNAVAILABLE));
        EntityExchangeResult<byte[]> result = postOk(chat(20, true));
        List<String> payloads = Sse.payloads(result.getResponseBody());
        assertThat(payloads.get(payloads.size() - 1)).isEqualTo("[DONE]");
        JsonNode error = Sse.json(payloads.get(payloads.size() - 2)).get("error");
        assertThat(error.get("type").stringValue()).isEqualTo("server_error");
        assertThat(error.get("code").stringValue()).isEqualTo("no_worker");
        assertThat(error.get("message").stringValue()).contains("2 worker failures");
        List<JsonNode> before = payloads.subList(0, payloads.size() - 2).stream().map(Sse::json).toList();
        assertThat(content(before)).isEqualTo(FakeCluster.expectedText(4));
        String id = cluster.workerA.generates.get(0).getRequestId();
        await().atMost(WAIT).until(() -> cluster.records.of(id).isPresent());
        assertThat(cluster.records.of(id).orElseThrow().getOutcome()).isEqualTo(RequestOutcome.REQUEST_OUTCOME_FAILED);
    }

    @Test
    void aWorkerRefusingTheRequestIsAClientErrorAndNotMigrated() {
        cluster.workerA.behave(FakeWorker.Behaviour.failAfter(0, Status.INVALID_ARGUMENT));
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(chat(4, true))
                .exchange()
                .expectStatus().isBadRequest()
                .expectHeader().contentType(MediaType.APPLICATION_JSON)
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("worker-a failed on purpose"));
        assertThat(cluster.workerB.generates).isEmpty();
        assertThat(cluster.router.failures).isEmpty();
    }

    @Test
    void aRequestTheRouterCallsBusyWaitsAndRunsWhenCapacityIsPushed() {
        java.util.concurrent.atomic.AtomicBoolean busy = new java.util.concurrent.atomic.AtomicBoolean(true);
        cluster.router.pushCapacity(cluster.router.capacity(java.util.Set.of()));
        cluster.router.decide(r -> busy.get() ? RouteDecision.newBuilder().setBusy(true).setRetryAfterMs(60_000).build()
                : cluster.decisionFor(cluster.workerA).build());
        List<String> body = new java.util.concurrent.CopyOnWriteArrayList<>();
        reactor.core.Disposable client = WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(chat(4, false))
                .retrieve().bodyToMono(String.class).subscribe(body::add);
        try {
            await().atMost(WAIT).until(() -> cluster.router.routes.size() == 1);
            await("the planner is told a request waits here").atMost(WAIT).until(() -> queued("flotilla-sim") == 1);
            busy.set(false);
            cluster.router.pushCapacity(cluster.router.capacity(java.util.Set.of())); // a worker freed capacity
            await().atMost(WAIT).until(() -> body.size() == 1);
            assertThat(body.get(0)).contains("\"finish_reason\":\"length\"");
            String id = cluster.router.routes.get(0).getRequestId();
            assertThat(cluster.router.routesOf(id)).hasSize(2);
            await().atMost(WAIT).until(() -> cluster.records.of(id).isPresent());
            assertThat(cluster.records.of(id).orElseThrow().getQueueMs()).as("it waited for capacity").isPositive();
        } finally {
            client.dispose();
        }
    }

    /** Requests of {@code model} queued at this test's gateway, as its latest load report says. */
    private int queued(String model) {
        GatewayLoad load = cluster.records.loads.get(instance.id());
        return load == null ? -1 : load.getModelsList().stream().filter(m -> m.getModel().equals(model))
                .mapToInt(GatewayModelLoad::getQueued).sum();
    }

    @Test
    void aRequestThatStaysBusyPastItsQueueDeadlineIs503QueueTimeout() {
        cluster.router.decide(r -> RouteDecision.newBuilder().setBusy(true).setRetryAfterMs(100).build());
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .header(ResponseHeaders.QUEUE_TIMEOUT, "800ms").bodyValue(chat(4, true))
                .exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().valueEquals("Retry-After", "1")
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("server_error")
                .jsonPath("$.error.code").isEqualTo("queue_timeout");
        assertThat(cluster.workerA.generates).isEmpty();
        String id = cluster.router.routes.get(0).getRequestId();
        assertThat(cluster.router.routesOf(id).size()).as("asked again as the busy hold ended").isGreaterThan(1);
        assertThat(cluster.router.releases).as("a busy answer books nothing").doesNotContain(id);
    }

    @Test
    void aFailingRouterNeverFailsTheRequest() {
        cluster.router.decide(r -> {
            throw Status.UNAVAILABLE.withDescription("router restarting").asRuntimeException();
        });
        EntityExchangeResult<byte[]> result = web.post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"prompt\":\"hi\",\"max_tokens\":2}")
                .exchange()
                .expectStatus().isOk()
                .expectHeader().valueEquals(ResponseHeaders.MODE, "gateway_fallback")
                .expectBody(byte[].class).returnResult();
        String worker = result.getResponseHeaders().getFirst(ResponseHeaders.WORKER);
        assertThat(worker).isIn("worker-a", "worker-b");
        String id = cluster.router.routes.get(0).getRequestId();
        assertThat(cluster.router.routesOf(id)).as("tried, then tried once more").hasSize(2);
        await().atMost(WAIT).until(() -> cluster.records.of(id).isPresent());
        assertThat(cluster.records.of(id).orElseThrow().getModeUsed())
                .isEqualTo(io.flotilla.protocol.v1.RoutingMode.ROUTING_MODE_GATEWAY_FALLBACK);
        await().atMost(WAIT).until(() -> cluster.router.releases.contains(id)); // it may have booked: released
    }

    @Test
    void theFallbackSpreadsABurstOverTheWorkers() {
        cluster.router.decide(r -> {
            throw Status.UNAVAILABLE.withDescription("router down").asRuntimeException();
        });
        cluster.workerA.behave(FakeWorker.Behaviour.holdAfter(1));
        cluster.workerB.behave(FakeWorker.Behaviour.holdAfter(1));
        List<reactor.core.Disposable> held = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                held.add(WebClient.create(baseUrl()).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(chat(50, true)).retrieve().bodyToFlux(String.class).subscribe());
            }
            await().atMost(WAIT).until(() -> cluster.workerA.held.size() + cluster.workerB.held.size() == 4);
            assertThat(cluster.workerA.held).hasSize(2);
            assertThat(cluster.workerB.held).hasSize(2);
        } finally {
            held.forEach(reactor.core.Disposable::dispose);
        }
    }

    @Test
    void aClientDisconnectCancelsTheWorkerCallAndReleasesTheBooking() {
        cluster.workerA.behave(FakeWorker.Behaviour.holdAfter(2));
        List<String> firstEvents = WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(chat(50, true))
                .retrieve()
                .bodyToFlux(String.class)
                .take(3) // role chunk and the two tokens, then the client goes away
                .collectList()
                .block(WAIT);
        assertThat(firstEvents).hasSize(3);
        String id = cluster.workerA.generates.get(0).getRequestId();
        await().atMost(WAIT).until(() -> cluster.workerA.cancelled.contains(id));
        await().atMost(WAIT).until(() -> cluster.router.releases.contains(id));
        await().atMost(WAIT).until(() -> cluster.records.of(id).isPresent());
        assertThat(cluster.records.of(id).orElseThrow().getOutcome()).isEqualTo(RequestOutcome.REQUEST_OUTCOME_CANCELLED);
        assertThat(cluster.records.of(id).orElseThrow().getOsl()).isEqualTo(2);
    }
}
