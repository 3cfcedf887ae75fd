package io.flotilla.router.it;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.kafka.KafkaBrokerExtension;
import io.flotilla.router.RouterApplication;
import io.flotilla.worker.WorkerApplication;
import io.flotilla.worker.engine.openai.FakeVllmServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A worker in front of a vLLM-shaped engine that reports {@code num_gpu_blocks=2000}: the router's view of
 * that worker has the engine's capacity (not the simulator's 8,192) with source {@code engine}, no timing
 * until one is learned, and its busy verdict follows the engine's reported KV usage against 2,000 blocks.
 */
@ExtendWith(KafkaBrokerExtension.class)
class RealEngineCapacityTest {

    private static final HttpClient HTTP = HttpClient.newHttpClient();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Test
    void theRouterSeesTheEnginesCapacityAndBusyDetectionFollowsIt(KafkaBroker kafka) throws Exception {
        String id = "vllm-cap-" + System.nanoTime();
        int routerMgmt = KafkaBroker.freePort();
        try (FakeVllmServer engine = new FakeVllmServer()) {
            engine.setMetrics(0, 0, 0.10, 16, 2000);
            ConfigurableApplicationContext worker = new SpringApplicationBuilder(WorkerApplication.class).run(
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=0",
                    "--flotilla.worker.id=" + id, "--flotilla.worker.grpc-port=" + KafkaBroker.freePort(),
                    "--flotilla.worker.advertised-host=127.0.0.1", "--flotilla.worker.engine=openai-http",
                    "--flotilla.worker.http.url=" + engine.url(), "--flotilla.worker.http.scrape-interval-ms=50",
                    "--flotilla.worker.load-report-ms=50");
            ConfigurableApplicationContext router = new SpringApplicationBuilder(RouterApplication.class).run(
                    "--spring.kafka.bootstrap-servers=" + kafka.bootstrapServers(), "--server.port=" + routerMgmt,
                    "--flotilla.router.grpc-port=" + KafkaBroker.freePort(), "--flotilla.router.indexer.address=127.0.0.1:1");
            try {
                await().atMost(Duration.ofSeconds(30)).until(() -> view(routerMgmt, id) != null
                        && view(routerMgmt, id).path("capacity_blocks").asInt() == 2000
                        // the load report may carry the engine's blocks before the next heartbeat names the source
                        && view(routerMgmt, id).path("capacity_source").asString().equals("engine"));
                JsonNode w = view(routerMgmt, id);
                assertThat(w.path("engine").asString()).isEqualTo("vllm");
                assertThat(w.path("timing").path("source").asString()).as("no simulator timing for a real engine").isEqualTo("none");
                assertThat(w.path("busy").asBoolean()).isFalse();

                engine.setMetrics(0, 0, 0.97, 16, 2000); // 1,940 of 2,000 blocks in use, over the 0.95 threshold
                await().atMost(Duration.ofSeconds(15)).until(() -> view(routerMgmt, id).path("busy").asBoolean());
                assertThat(view(routerMgmt, id).path("active_blocks").asLong()).isEqualTo(1940);

                engine.setMetrics(0, 0, 0.90, 16, 2000); // 1,800: under it again
                await().atMost(Duration.ofSeconds(15)).until(() -> !view(routerMgmt, id).path("busy").asBoolean());
            } finally {
                router.close();
                worker.close();
            }
        }
    }

    private static JsonNode view(int mgmt, String id) throws Exception {
        String body = HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + mgmt + "/actuator/router")).build(),
                HttpResponse.BodyHandlers.ofString()).body();
        for (JsonNode w : JSON.readTree(body).path("workers")) {
            if (w.path("id").asString().equals(id)) {
                return w;
            }
        }
        return null;
    }
}
