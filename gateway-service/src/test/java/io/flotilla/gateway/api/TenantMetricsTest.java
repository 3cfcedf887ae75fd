package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeWorker;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Per-tenant meters on the Prometheus endpoint: requests, prompt and completion tokens, cache hits and
 * rejections of each API key, by its id (never its value), with one extra tag so a third key is {@code other}.
 */
@TestPropertySource(properties = {
        "flotilla.gateway.auth.api-keys=tm-key-1,tm-key-2,tm-key-3",
        "flotilla.gateway.rate-limit.requests-per-period=2",
        "flotilla.gateway.rate-limit.period=1h",
        "flotilla.gateway.metrics.tenant-tags=1",
})
class TenantMetricsTest extends GatewayTestBase {

    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":3}";

    @LocalManagementPort
    int managementPort;

    private WebTestClient.ResponseSpec chat(String key) {
        return web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .header(HttpHeaders.AUTHORIZATION, "Bearer " + key).bodyValue(CHAT).exchange();
    }

    private String scrape() {
        return WebTestClient.bindToServer().baseUrl("http://127.0.0.1:" + managementPort)
                .codecs(c -> c.defaultCodecs().maxInMemorySize(8 * 1024 * 1024)).build() // a scrape outgrows the 256 KiB default
                .get().uri("/actuator/prometheus").exchange().expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }

    private static double sample(String scrape, String name, String... labels) {
        Matcher m = Pattern.compile("(?m)^" + Pattern.quote(name) + "\\{([^}]*)} (\\S+)$").matcher(scrape);
        double sum = 0;
        while (m.find()) {
            boolean all = true;
            for (String l : labels) {
                all &= Pattern.compile("(^|,)" + l + "(,|$)").matcher(m.group(1)).find();
            }
            if (all) {
                sum += Double.parseDouble(m.group(2));
            }
        }
        return sum;
    }

    @Test
    void eachKeyIsMeteredUnderItsIdAndKeysBeyondTheTagBoundAreOther() {
        cluster.workerA.behave(FakeWorker.Behaviour.cached(16));
        cluster.workerB.behave(FakeWorker.Behaviour.cached(16));
        chat("tm-key-1").expectStatus().isOk();
        chat("tm-key-1").expectStatus().isOk();
        chat("tm-key-1").expectStatus().isEqualTo(429);
        chat("tm-key-2").expectStatus().isOk();
        chat("tm-key-3").expectStatus().isOk();

        await().atMost(WAIT).until(() -> sample(scrape(), "flotilla_gateway_tenant_requests_total") >= 4);
        String s = scrape();
        assertThat(s).doesNotContain("tm-key-");
        Matcher own = Pattern.compile("flotilla_gateway_tenant_requests_total\\{[^}]*tenant=\"(key-[^\"]+)\"").matcher(s);
        assertThat(own.find()).as("the first key has its own tag").isTrue();
        String first = "tenant=\"" + own.group(1) + "\"";
        assertThat(sample(s, "flotilla_gateway_tenant_requests_total", first, "outcome=\"ok\"")).isEqualTo(2);
        assertThat(sample(s, "flotilla_gateway_tenant_requests_total", "tenant=\"other\"", "outcome=\"ok\"")).isEqualTo(2);
        assertThat(sample(s, "flotilla_gateway_tenant_tokens_total", first, "kind=\"prompt\"")).isPositive();
        assertThat(sample(s, "flotilla_gateway_tenant_tokens_total", first, "kind=\"completion\"")).isPositive();
        assertThat(sample(s, "flotilla_gateway_tenant_cache_hits_total", first)).isEqualTo(2);
        assertThat(sample(s, "flotilla_gateway_tenant_cached_tokens_total", first)).isPositive();
        assertThat(sample(s, "flotilla_gateway_tenant_rejections_total", first, "reason=\"rate_limited\"")).isEqualTo(1);
        Matcher tenants = Pattern.compile("tenant=\"([^\"]+)\"").matcher(s);
        java.util.Set<String> values = new java.util.HashSet<>();
        while (tenants.find()) {
            values.add(tenants.group(1));
        }
        assertThat(values).as("one own tag, then other").hasSize(2).contains("other");
    }
}
