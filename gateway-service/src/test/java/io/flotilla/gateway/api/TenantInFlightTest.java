package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeWorker;
import io.flotilla.gateway.flow.FlowController;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.core.Disposable;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The per-key in-flight limit through the HTTP API ({@code flow.tenant-max-in-flight=1}, no shared store):
 * a key's second request waits in the queue while the first runs, another key's request passes it, and
 * the waiter runs once the first one ends.
 */
@TestPropertySource(properties = {
        "flotilla.gateway.auth.api-keys=ti-key-1,ti-key-2",
        "flotilla.gateway.flow.tenant-max-in-flight=1",
})
class TenantInFlightTest extends GatewayTestBase {

    private static final String MODEL = "flotilla-sim";

    @Autowired
    FlowController flow;

    private Disposable send(String key, boolean stream, List<String> bodies) {
        return WebClient.create(baseUrl()).post().uri("/v1/chat/completions")
                .contentType(MediaType.APPLICATION_JSON).header(HttpHeaders.AUTHORIZATION, "Bearer " + key)
                .bodyValue("{\"model\":\"" + MODEL + "\",\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],"
                        + "\"max_tokens\":3,\"stream\":" + stream + "}")
                .retrieve().bodyToFlux(String.class).subscribe(bodies::add);
    }

    @Test
    void aKeyAtItsLimitWaitsWhileAnotherKeyPassesAndRunsWhenItsRequestEnds() {
        cluster.workerA.behave(FakeWorker.Behaviour.holdAfter(1));
        List<String> firstBody = new CopyOnWriteArrayList<>();
        List<String> waiterBody = new CopyOnWriteArrayList<>();
        List<String> otherBody = new CopyOnWriteArrayList<>();
        Disposable first = send("ti-key-1", true, firstBody);
        Disposable waiter = null;
        Disposable other = null;
        try {
            await().atMost(WAIT).until(() -> cluster.workerA.held.size() == 1);
            waiter = send("ti-key-1", false, waiterBody);
            await().atMost(WAIT).until(() -> flow.queued(MODEL) == 1);
            other = send("ti-key-2", true, otherBody);
            await().atMost(WAIT).until(() -> cluster.workerA.held.size() == 2); // dispatched past key 1's waiter
            assertThat(flow.queued(MODEL)).isEqualTo(1);
            assertThat(waiterBody).isEmpty();

            cluster.workerA.behave(FakeWorker.Behaviour.NORMAL);
            first.dispose(); // key 1's running request ends: its place goes to its waiter
            await().atMost(WAIT).until(() -> waiterBody.size() == 1);
            assertThat(waiterBody.get(0)).contains("\"finish_reason\":\"length\"");
            assertThat(flow.queued(MODEL)).isZero();
        } finally {
            first.dispose();
            if (waiter != null) {
                waiter.dispose();
            }
            if (other != null) {
                other.dispose();
            }
            cluster.workerA.behave(FakeWorker.Behaviour.NORMAL);
        }
    }
}
