package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.flotilla.cluster.launcher.ClusterSpec;
import io.flotilla.cluster.launcher.Tenancy;
import io.flotilla.protocol.Ports;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tenant isolation and LoRA adapters on the whole local cluster ({@code bin/flotilla up --prefix-sharing tenant
 * --api-key … --public-prefix … --lora sql}), two simulated workers.
 *
 * <p>The side channel is checked on what decides a simulated engine's time to first token: the prompt tokens it
 * computes (its step time is a fixed function of them, {@code TimingModel}). Tenant B's request for the prompt
 * tenant A has just sent must compute every token, hit none and report {@code cached_tokens} 0 — exactly what a
 * cold prompt of the same length does — while A's own repeat hits (so the check can fail). Counters are summed over
 * both workers, so it holds wherever the router sends B; without salts the router would send B to A's worker.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class TenantIsolationE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String KEY_A = "sk-tenant-a-0123456789";
    private static final String KEY_B = "sk-tenant-b-9876543210";
    private static final String SYSTEM = "You are the support assistant of ExampleCorp. Answer briefly and cite the handbook. ".repeat(8);

    @RegisterExtension
    static final ClusterExtension cluster = new ClusterExtension("flotilla-e2e-tenancy-",
            c -> c.tenancy(Tenancy.parse("tenant", List.of(SYSTEM), List.of(KEY_A, KEY_B), List.of("sql"), 1, 300))
                    .up(ClusterSpec.builder().workers(2).timeout(Duration.ofSeconds(240)).build()));

    @Test
    @Order(1)
    void theClusterServesBothKeysAndListsTheAdapter() throws Exception {
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.get().routable().size() == 2);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> complete(KEY_A, "flotilla-sim", "warm-up").statusCode() == 200);
        JsonNode models = JSON.readTree(ClusterUnderTest.HTTP.send(HttpRequest.newBuilder(
                        URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + "/v1/models"))
                .header("Authorization", "Bearer " + KEY_A).build(), HttpResponse.BodyHandlers.ofString()).body());
        assertThat(models.get("data").findValuesAsText("id")).contains("flotilla-sim", "sql");
    }

    @Test
    @Order(2)
    void tenantBComputesTenantAsCachedPromptLikeAColdOne() throws Exception {
        String secret = "Draft press release: ExampleCorp acquires Initech for 4.2 billion, announce on Friday. ".repeat(40);
        HttpResponse<String> first = complete(KEY_A, "flotilla-sim", secret);
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        int prompt = usage(first).get("prompt_tokens").asInt();
        String worker = first.headers().firstValue("x-flotilla-worker").orElseThrow();
        // A's own repeat is served from A's cache (the check below could fail)
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            HttpResponse<String> again = complete(KEY_A, "flotilla-sim", secret);
            assertThat(again.headers().firstValue("x-flotilla-worker")).contains(worker);
            assertThat(cached(again)).isGreaterThanOrEqualTo(prompt / 16 * 16 - 16);
        });

        Work before = Work.now();
        HttpResponse<String> probe = complete(KEY_B, "flotilla-sim", secret);
        Work probed = Work.after(before, prompt);
        String cold = "Quarterly planning notes for the facilities team, nothing confidential at all here. ".repeat(40);
        Work beforeCold = Work.now();
        HttpResponse<String> coldAnswer = complete(KEY_B, "flotilla-sim", cold);
        Work coldWork = Work.after(beforeCold, usage(coldAnswer).get("prompt_tokens").asInt());

        assertThat(probe.statusCode()).isEqualTo(200);
        assertThat(usage(probe).get("prompt_tokens").asInt()).isEqualTo(prompt);
        assertThat(cached(probe)).as("cached_tokens reveals nothing of A's prompt").isZero();
        assertThat(probed.hitTokens).as("no token of A's cached prompt served to B").isZero();
        assertThat(probed.computedTokens).as("B computes the whole prompt, as for a cold one").isEqualTo(prompt);
        assertThat(cached(coldAnswer)).isZero();
        assertThat(coldWork.hitTokens).isZero();
        assertThat(coldWork.computedTokens).isEqualTo(usage(coldAnswer).get("prompt_tokens").asInt());
        System.out.printf("tenant B: A's prompt TTFT-relevant work %d computed / %d hit tokens, a cold prompt's %d / %d%n",
                probed.computedTokens, probed.hitTokens, coldWork.computedTokens, coldWork.hitTokens);
    }

    @Test
    @Order(3)
    void aDeclaredPublicSystemPromptStaysSharedAcrossTenants() throws Exception {
        HttpResponse<String> a = chat(KEY_A, SYSTEM, "Where is the handbook?");
        assertThat(a.statusCode()).as(a.body()).isEqualTo(200);
        await().atMost(Duration.ofSeconds(20)).untilAsserted(() -> {
            HttpResponse<String> b = chat(KEY_B, SYSTEM, "How do I reset my password?");
            assertThat(cached(b)).as("B reuses the public system prompt A computed").isPositive()
                    .isLessThan(usage(b).get("prompt_tokens").asInt());
        });
    }

    @Test
    @Order(4)
    void anAdapterRequestLoadsOnceAndThenLandsOnTheWorkerThatHasItLoaded() throws Exception {
        double loadsBefore = sum("flotilla_worker_adapter_loads_total");
        HttpResponse<String> first = complete(KEY_A, "sql", "SELECT the top customers by revenue");
        assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
        assertThat(JSON.readTree(first.body()).get("model").asText()).isEqualTo("sql");
        String loadedOn = first.headers().firstValue("x-flotilla-worker").orElseThrow();
        assertThat(sum("flotilla_worker_adapter_loads_total") - loadsBefore).isEqualTo(1);
        // once the router has the worker's heartbeat with the load, adapter requests go there (the other would pay 300 ms)
        await().atMost(Duration.ofSeconds(10)).until(() -> routerSees(loadedOn).path("adapters").path("loaded").toString()
                .contains("\"sql\""));
        for (int i = 0; i < 6; i++) {
            HttpResponse<String> next = complete(KEY_B, "sql", "SELECT count(*) FROM orders WHERE id = " + i);
            assertThat(next.statusCode()).isEqualTo(200);
            assertThat(next.headers().firstValue("x-flotilla-worker")).contains(loadedOn);
        }
        assertThat(sum("flotilla_worker_adapter_loads_total") - loadsBefore).as("no second load").isEqualTo(1);
        HttpResponse<String> unknown = complete(KEY_A, "no-such-adapter", "hello");
        assertThat(unknown.statusCode()).isEqualTo(404);
    }

    /** The router's view of {@code worker} ({@code GET /actuator/router}). */
    private static JsonNode routerSees(String worker) throws Exception {
        JsonNode router = JSON.readTree(ClusterUnderTest.HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + Ports.ROUTER_MANAGEMENT + "/actuator/router")).build(),
                HttpResponse.BodyHandlers.ofString()).body());
        for (JsonNode w : router.path("workers")) {
            if (w.path("id").asText().equals(worker)) {
                return w;
            }
        }
        return JSON.createObjectNode();
    }

    /** Prompt tokens the workers computed and served from cache, summed over both. */
    private record Work(long computedTokens, long hitTokens) {
        static Work now() throws Exception {
            return new Work((long) sum("flotilla_worker_prefill_tokens_total"), (long) sum("flotilla_worker_prefix_hit_tokens_total"));
        }

        /** The work since {@code before}, once the workers have counted {@code promptTokens} more (their counters follow the answer). */
        static Work after(Work before, int promptTokens) {
            await().atMost(Duration.ofSeconds(10)).until(() -> {
                Work w = now().minus(before);
                return w.computedTokens + w.hitTokens >= promptTokens;
            });
            try {
                return now().minus(before);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }

        Work minus(Work o) {
            return new Work(computedTokens - o.computedTokens, hitTokens - o.hitTokens);
        }
    }

    private static double sum(String metric) throws Exception {
        return ClusterUnderTest.workerMetric(Ports.workerId(0), metric) + ClusterUnderTest.workerMetric(Ports.workerId(1), metric);
    }

    private static JsonNode usage(HttpResponse<String> r) throws Exception {
        return JSON.readTree(r.body()).get("usage");
    }

    private static int cached(HttpResponse<String> r) throws Exception {
        JsonNode details = usage(r).get("prompt_tokens_details");
        return details == null || details.isNull() ? 0 : details.get("cached_tokens").asInt();
    }

    private static HttpResponse<String> complete(String key, String model, String prompt) throws Exception {
        return post(key, "/v1/completions", JSON.createObjectNode().put("model", model).put("max_tokens", 2).put("prompt", prompt));
    }

    private static HttpResponse<String> chat(String key, String system, String user) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("model", "flotilla-sim").put("max_tokens", 2);
        body.putArray("messages").add(JSON.createObjectNode().put("role", "system").put("content", system))
                .add(JSON.createObjectNode().put("role", "user").put("content", user));
        return post(key, "/v1/chat/completions", body);
    }

    private static HttpResponse<String> post(String key, String path, ObjectNode body) throws Exception {
        return ClusterUnderTest.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP + path))
                .header("Content-Type", "application/json").header("Authorization", "Bearer " + key)
                .timeout(Duration.ofSeconds(30)).POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }
}
