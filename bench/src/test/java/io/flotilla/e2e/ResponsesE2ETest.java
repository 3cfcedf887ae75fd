package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.GatewayOptions;
import io.flotilla.cluster.launcher.Tenancy;
import io.flotilla.cluster.redis.RedisServerExtension;
import io.flotilla.protocol.Ports;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A three-turn Responses conversation through two gateways sharing their store in the launcher's Redis, on two
 * simulated workers behind the KV router: each turn continues the previous one with {@code previous_response_id}
 * through the other gateway, stays on the worker that holds its KV (named to the router as the previous worker,
 * priced by the index's overlap), and finds more of its prompt cached each turn; another API key reads none of it.
 */
class ResponsesE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY = "sk-responses-e2e";
    private static final String OTHER_KEY = "sk-responses-other";
    private static final List<Integer> GATEWAYS = List.of(Ports.gatewayHttp(0), Ports.gatewayHttp(1));

    @RegisterExtension
    static final ClusterExtension cluster = new ClusterExtension("flotilla-e2e-responses-",
            c -> RedisServerExtension.requireBinary(c).tenancy(Tenancy.parse(null, null, List.of(KEY, OTHER_KEY), null, 4, 500))
                    .up(ClusterSpec.builder().workers(2).simSpeedup(10.0).gateways(GatewayOptions.parse(2, null, List.of(
                                    // a 2-core machine shared by several builds stalls threads past the default 50 ms
                                    "limits.timeout=2s", "limits.connect-timeout=5s")))
                            .timeout(Duration.ofSeconds(240)).build()));

    private static HttpResponse<String> send(int port, String key, String method, String path, ObjectNode body) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + key)
                .timeout(Duration.ofSeconds(60));
        b = body == null ? b.method(method, HttpRequest.BodyPublishers.noBody())
                : b.method(method, HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        return ClusterUnderTest.HTTP.send(b.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** A user turn long enough to fill several KV blocks of its own. */
    private static String turn(int n) {
        return ("Turn " + n + ": tell me more about the harbour, the boats, the tides and the lighthouse keeper. ").repeat(8);
    }

    @Test
    void threeTurnsThroughTwoGatewaysStayWithTheirKvAndAreTheKeysAlone() throws Exception {
        ClusterUnderTest c = cluster.get();
        await().atMost(Duration.ofSeconds(60)).until(() -> c.routable().size() == 2);
        for (int port : GATEWAYS) {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(500))
                    .until(() -> send(port, KEY, "GET", "/v1/models", null).body().contains("flotilla-sim"));
        }

        String previous = null;
        List<String> workers = new ArrayList<>();
        List<Integer> cached = new ArrayList<>();
        List<String> ids = new ArrayList<>();
        for (int t = 0; t < 3; t++) {
            ObjectNode body = JSON.createObjectNode().put("model", "flotilla-sim").put("input", turn(t))
                    .put("max_output_tokens", 24);
            if (previous != null) {
                body.put("previous_response_id", previous);
            }
            HttpResponse<String> r = send(GATEWAYS.get(t % 2), KEY, "POST", "/v1/responses", body);
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            JsonNode response = JSON.readTree(r.body());
            previous = response.path("id").asText();
            ids.add(previous);
            workers.add(r.headers().firstValue("x-flotilla-worker").orElseThrow());
            cached.add(response.path("usage").path("input_tokens_details").path("cached_tokens").asInt());
            System.out.printf("responses e2e: turn %d via gateway %d on %s: input %d tokens, %d cached%n", t + 1,
                    t % 2, workers.get(t), response.path("usage").path("input_tokens").asInt(), cached.get(t));
        }
        assertThat(workers).as("every turn on the worker holding the conversation's KV").containsOnly(workers.get(0));
        assertThat(cached.get(1)).as("turn 2 reuses turn 1's prompt").isGreaterThan(cached.get(0));
        assertThat(cached.get(2)).as("turn 3 reuses more").isGreaterThan(cached.get(1));

        for (int port : GATEWAYS) {
            HttpResponse<String> mine = send(port, KEY, "GET", "/v1/responses/" + ids.get(2) + "/input_items?order=asc", null);
            assertThat(mine.statusCode()).as(mine.body()).isEqualTo(200);
            assertThat(JSON.readTree(mine.body()).path("data").size()).as("3 inputs and 2 answers").isEqualTo(5);
            for (String id : ids) {
                HttpResponse<String> other = send(port, OTHER_KEY, "GET", "/v1/responses/" + id, null);
                assertThat(other.statusCode()).as(other.body()).isEqualTo(404);
            }
            ObjectNode followUp = JSON.createObjectNode().put("input", "and?").put("previous_response_id", ids.get(2));
            assertThat(send(port, OTHER_KEY, "POST", "/v1/responses", followUp).statusCode()).isEqualTo(404);
        }
    }
}
