package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeWorker;
import io.grpc.Status;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;

/** The gateway's meters appear on the management port's Prometheus endpoint under their documented names. */
class MetricsTest extends GatewayTestBase {

    @LocalManagementPort
    int managementPort;

    @Test
    void requestMetricsAreExposedForPrometheus() {
        cluster.workerA.behave(new FakeWorker.Behaviour(2, Status.UNAVAILABLE, -1, 0, false));
        cluster.workerB.behave(FakeWorker.Behaviour.cached(16));
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":5}")
                .exchange().expectStatus().isOk();
        web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"messages\":[]}")
                .exchange().expectStatus().isBadRequest();
        web.post().uri("/v1/messages").contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}")
                .exchange().expectStatus().isOk();
        String tools = ",\"tools\":[{\"type\":\"function\",\"function\":{\"name\":\"f\"}}]";
        cluster.workerB.behave(FakeWorker.Behaviour.NORMAL);
        cluster.workerA.behave(FakeWorker.Behaviour.NORMAL);
        for (String reply : new String[] {"<think>hm</think>ok <tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
                "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": }\n</tool_call>"}) {
            cluster.workerA.reply(reply);
            web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                    .bodyValue("{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]" + tools + "}")
                    .exchange().expectStatus().isOk();
        }

        String scrape = WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort)
                .codecs(c -> c.defaultCodecs().maxInMemorySize(8 * 1024 * 1024)).build() // a scrape outgrows the 256 KiB default
                .get().uri("/actuator/prometheus").exchange()
                .expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
        assertThat(scrape)
                .containsPattern("flotilla_gateway_requests_total\\{[^}]*endpoint=\"/v1/chat/completions\"[^}]*model=\"flotilla-sim\"[^}]*outcome=\"ok\"")
                .containsPattern("flotilla_gateway_requests_total\\{[^}]*endpoint=\"/v1/messages\"[^}]*model=\"flotilla-sim\"[^}]*outcome=\"ok\"")
                .containsPattern("flotilla_gateway_requests_total\\{[^}]*model=\"unknown\"[^}]*outcome=\"client_error\"")
                .contains("flotilla_gateway_ttft_seconds_bucket{")
                .contains("flotilla_gateway_itl_seconds_bucket{")
                .contains("flotilla_gateway_e2e_seconds_bucket{")
                .containsPattern("flotilla_gateway_inflight\\{[^}]*model=\"flotilla-sim\"")
                .containsPattern("flotilla_gateway_migrations_total\\{[^}]*model=\"flotilla-sim\"")
                .containsPattern("flotilla_gateway_cached_tokens_total\\{[^}]*model=\"flotilla-sim\"")
                .contains("flotilla_gateway_records_dropped_total")
                .contains("flotilla_gateway_records_failed_total")
                .containsPattern("flotilla_gateway_tool_calls_total\\{[^}]*model=\"flotilla-sim\"")
                .containsPattern("flotilla_gateway_tool_calls_malformed_total\\{[^}]*model=\"flotilla-sim\"")
                .containsPattern("flotilla_gateway_reasoning_tokens_total\\{[^}]*model=\"flotilla-sim\"");
    }
}
