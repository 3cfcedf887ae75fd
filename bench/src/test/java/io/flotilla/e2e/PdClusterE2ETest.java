package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.protocol.Ports;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Disaggregated serving on the local cluster as {@code bin/flotilla up --prefill 1 --decode 1} starts it
 * (real Kafka, every service its own JVM from its exec jar): a 6,000-token prompt sent to the gateway's
 * {@code /v1/completions} is prefilled on the prefill worker, its KV moves to the decode worker through
 * transfer-native, and the decode worker returns every requested token —
 * {@code x-flotilla-prefill-worker} names the prefill worker, {@code x-flotilla-worker} the decode
 * worker. With {@code x-flotilla-disagg: off} the same prompt runs aggregated on the decode worker and
 * gives the same tokens (greedy: the simulated engine's output depends on the prompt only).
 *
 * <p>Like every local-cluster test it needs the fixed ports free; run it under
 * {@code flock /tmp/flotilla-cluster.lock} on a shared machine. About 60 s, most of it start-up.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PdClusterE2ETest {

    private static final HttpClient HTTP = ClusterUnderTest.HTTP;
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PREFILL = Ports.workerId(0);
    private static final String DECODE = Ports.workerId(1);
    private static final int ISL = 6000;
    private static final int MAX_TOKENS = 50;

    @RegisterExtension
    static final ClusterExtension cluster = new ClusterExtension("flotilla-e2e-pd-", c -> c.up(ClusterSpec.builder()
            .workers(0).prefillDecode(1, 1).timeout(Duration.ofSeconds(240)).build()));

    @Test
    @Order(1)
    void theRouterSeesOnePrefillAndOneDecodeWorker() {
        assertThat(cluster.get().started()).extracting(RunningService::name).contains(PREFILL, DECODE);
        await().atMost(Duration.ofSeconds(30)).until(() -> routable().size() == 2);
        assertThat(routable()).extracting(WorkerInfo::getWorkerId, WorkerInfo::getRole).containsExactlyInAnyOrder(
                org.assertj.core.groups.Tuple.tuple(PREFILL, WorkerRole.WORKER_ROLE_PREFILL),
                org.assertj.core.groups.Tuple.tuple(DECODE, WorkerRole.WORKER_ROLE_DECODE));
        // Cold code in five JVMs: the cluster is ready once it serves a short request.
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> complete(prompt(64, 1), 4, null).statusCode() == 200);
    }

    @Test
    @Order(2)
    void aLongPromptIsPrefilledOnThePrefillWorkerAndDecodedOnTheDecodeWorker() throws Exception {
        double usedBefore = metric(DECODE, "flotilla_worker_handoffs_used_total");
        double grantedBefore = metric(PREFILL, "flotilla_worker_leases_granted_total");

        HttpResponse<String> pd = complete(prompt(ISL, 7), MAX_TOKENS, null);

        assertThat(pd.statusCode()).as(pd.body()).isEqualTo(200);
        assertThat(pd.headers().firstValue("x-flotilla-prefill-worker")).as("prefilled elsewhere").contains(PREFILL);
        assertThat(pd.headers().firstValue("x-flotilla-worker")).as("decoded here").contains(DECODE);
        JsonNode body = JSON.readTree(pd.body());
        assertThat(body.get("usage").get("prompt_tokens").asInt()).isEqualTo(ISL);
        assertThat(body.get("usage").get("completion_tokens").asInt()).isEqualTo(MAX_TOKENS);
        assertThat(body.get("choices").get(0).get("finish_reason").asText()).isEqualTo("length");
        assertThat(metric(DECODE, "flotilla_worker_handoffs_used_total")).isEqualTo(usedBefore + 1);
        assertThat(metric(PREFILL, "flotilla_worker_leases_granted_total")).isEqualTo(grantedBefore + 1);
        // The decode worker pulled the prompt's full blocks (6,000 / 16 = 375 of 16 KiB).
        assertThat(metric(DECODE, "flotilla_worker_transfer_bytes_total")).isGreaterThanOrEqualTo(375 * 16384.0);
        // It releases the lease as soon as the blocks are in; nothing stays pinned on the prefill worker.
        await().atMost(Duration.ofSeconds(10))
                .until(() -> metric(PREFILL, "flotilla_worker_kv_leases_active") == 0.0);

        HttpResponse<String> aggregated = complete(prompt(ISL, 7), MAX_TOKENS, "off");

        assertThat(aggregated.statusCode()).as(aggregated.body()).isEqualTo(200);
        assertThat(aggregated.headers().firstValue("x-flotilla-prefill-worker")).isEmpty();
        assertThat(aggregated.headers().firstValue("x-flotilla-worker")).contains(DECODE);
        JsonNode agg = JSON.readTree(aggregated.body());
        assertThat(agg.get("usage").get("completion_tokens").asInt()).isEqualTo(MAX_TOKENS);
        assertThat(agg.get("choices").get(0).get("text").asText())
                .as("P/D continues the stream aggregated execution would produce")
                .isEqualTo(body.get("choices").get(0).get("text").asText());
    }

    @Test
    @Order(3)
    void aShortPromptStaysAggregatedOnTheDecodeWorker() throws Exception {
        HttpResponse<String> shortOne = complete(prompt(512, 11), 8, null);

        assertThat(shortOne.statusCode()).as(shortOne.body()).isEqualTo(200);
        assertThat(shortOne.headers().firstValue("x-flotilla-prefill-worker"))
                .as("512 uncached tokens are under the router's 1,024-token disaggregation threshold").isEmpty();
        assertThat(shortOne.headers().firstValue("x-flotilla-worker")).contains(DECODE);
    }

    /** {@code n} token ids in [1000, 51000), distinct per {@code salt}. */
    private static int[] prompt(int n, int salt) {
        int[] ids = new int[n];
        for (int i = 0; i < n; i++) {
            ids[i] = (int) ((i * 7919L + salt * 104729L) % 50000) + 1000;
        }
        return ids;
    }

    private static HttpResponse<String> complete(int[] prompt, int maxTokens, String disagg) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", maxTokens)
                .put("ignore_eos", true).put("temperature", 0);
        ArrayNode ids = body.putArray("prompt");
        for (int t : prompt) {
            ids.add(t);
        }
        HttpRequest.Builder request = HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/completions"))
                .header("Content-Type", "application/json").timeout(Duration.ofSeconds(30))
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body)));
        if (disagg != null) {
            request.header("x-flotilla-disagg", disagg);
        }
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<WorkerInfo> routable() {
        return cluster.get().routable();
    }

    private static double metric(String worker, String name) throws Exception {
        return ClusterUnderTest.workerMetric(worker, name);
    }
}
