package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.flow.FlowController;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Flow control through the HTTP API: {@code queue-model} runs 1 request and queues 1 (for minutes);
 * {@code tight-model} runs 1 and lets a queued request wait only 1 ms.
 */
class FlowControlTest extends GatewayTestBase {

    @Autowired
    FlowController flow;

    @LocalManagementPort
    int managementPort;

    private static String chat(String model, boolean stream) {
        return "{\"model\":\"" + model + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":3,\"stream\":"
                + stream + "}";
    }

    /** Starts a streamed request that the worker holds open; returns its subscription (dispose = disconnect). */
    private Disposable holdOneSlot(String model) {
        cluster.workerA.behave(FakeWorker.Behaviour.holdAfter(1));
        Disposable held = WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(chat(model, true))
                .retrieve().bodyToFlux(String.class).subscribe();
        await().atMost(WAIT).until(() -> cluster.workerA.held.size() == 1);
        return held;
    }

    @Test
    void aFullQueueIsAFast429AndAQueuedRequestRunsWhenTheSlotFrees() {
        Disposable running = holdOneSlot("queue-model");
        List<String> queuedBody = new CopyOnWriteArrayList<>();
        Disposable queued = WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                .contentType(MediaType.APPLICATION_JSON).bodyValue(chat("queue-model", false))
                .retrieve().bodyToMono(String.class).subscribe(queuedBody::add);
        try {
            await().atMost(WAIT).until(() -> flow.queued("queue-model") == 1);

            String view = WebClient.create("http://127.0.0.1:" + managementPort).get().uri("/actuator/flow")
                    .retrieve().bodyToMono(String.class).block(WAIT);
            assertThat(view).contains("\"queue-model\"", "\"queued\":1", "\"in_flight\":1", "\"standard\"", "\"anonymous\"");

            web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(chat("queue-model", false))
                    .exchange()
                    .expectStatus().isEqualTo(429)
                    .expectHeader().valueEquals("Retry-After", "1")
                    .expectBody()
                    .jsonPath("$.error.type").isEqualTo("rate_limit_error")
                    .jsonPath("$.error.code").isEqualTo("queue_full")
                    .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("queue-model"));
            // Anthropic's clients are told the service is overloaded (529), not that they exceeded their own limit
            web.post().uri("/v1/messages").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"model\":\"queue-model\",\"max_tokens\":3,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}")
                    .exchange()
                    .expectStatus().isEqualTo(529)
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("error")
                    .jsonPath("$.error.type").isEqualTo("overloaded_error");

            cluster.workerA.behave(FakeWorker.Behaviour.NORMAL);
            running.dispose(); // the client of the running request goes away: its slot passes to the queued one
            await().atMost(WAIT).until(() -> queuedBody.size() == 1);
            assertThat(queuedBody.get(0)).contains("\"finish_reason\":\"length\"");
            await().atMost(WAIT).until(() -> flow.inFlight("queue-model") == 0);
        } finally {
            running.dispose();
            queued.dispose();
        }
    }

    @Test
    void aClientThatDisconnectsWhileQueuedLeavesTheQueueAtOnce() {
        Disposable running = holdOneSlot("queue-model");
        try {
            Disposable queued = WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                    .contentType(MediaType.APPLICATION_JSON).bodyValue(chat("queue-model", false))
                    .retrieve().bodyToMono(String.class).subscribe();
            await().atMost(WAIT).until(() -> flow.queued("queue-model") == 1);
            queued.dispose();
            await().atMost(WAIT).until(() -> flow.queued("queue-model") == 0);
            assertThat(flow.inFlight("queue-model")).isEqualTo(1);
        } finally {
            running.dispose();
        }
        await().atMost(WAIT).until(() -> flow.inFlight("queue-model") == 0);
        assertThat(cluster.workerA.generates).as("the one that left never ran").hasSize(1);
    }

    @Test
    void aWaitPastTheQueueTimeoutIsA503WithRetryAfter() {
        Disposable running = holdOneSlot("tight-model");
        try {
            web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON).bodyValue(chat("tight-model", false))
                    .exchange()
                    .expectStatus().isEqualTo(503)
                    .expectHeader().valueEquals("Retry-After", "1")
                    .expectBody()
                    .jsonPath("$.error.type").isEqualTo("server_error")
                    .jsonPath("$.error.code").isEqualTo("queue_timeout");
        } finally {
            running.dispose();
        }
        await().atMost(WAIT).until(() -> flow.inFlight("tight-model") == 0);
    }

    @Test
    void theQueueTimeoutHeaderOverridesTheModelsAndZeroNeverWaits() {
        Disposable running = holdOneSlot("queue-model");
        try {
            web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                    .header(ResponseHeaders.QUEUE_TIMEOUT, "0").bodyValue(chat("queue-model", false))
                    .exchange()
                    .expectStatus().isEqualTo(503)
                    .expectBody().jsonPath("$.error.code").isEqualTo("queue_timeout");
        } finally {
            running.dispose();
        }
    }

    @Test
    void badFlowHeadersAre400() {
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .header(ResponseHeaders.PRIORITY, "urgent").bodyValue(chat("flotilla-sim", false))
                .exchange()
                .expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("invalid_request_error")
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("x-flotilla-priority", "urgent"));
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .header(ResponseHeaders.QUEUE_TIMEOUT, "soon").bodyValue(chat("flotilla-sim", false))
                .exchange()
                .expectStatus().isBadRequest()
                .expectBody()
                .jsonPath("$.error.message").value(m -> assertThat((String) m).contains("x-flotilla-queue-timeout"));
    }

    @Test
    void aServedRequestSaysHowItWasRoutedAndHowLongItWaited() {
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .header(ResponseHeaders.PRIORITY, "interactive").bodyValue(chat("flotilla-sim", false))
                .exchange()
                .expectStatus().isOk()
                .expectHeader().valueEquals(ResponseHeaders.QUEUE_MS, "0")
                .expectHeader().exists(ResponseHeaders.MODE);
    }
}
