package io.flotilla.gateway.api;

import com.openai.client.OpenAIClient;
import com.openai.client.okhttp.OpenAIOkHttpClient;
import com.openai.errors.UnauthorizedException;
import com.openai.models.models.Model;
import io.flotilla.gateway.GatewayTestBase;
import org.junit.jupiter.api.Test;
import org.springframework.http.HttpHeaders;
import org.springframework.http.MediaType;
import org.springframework.test.context.TestPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * API keys (from configuration and from a file; as {@code Authorization: Bearer} or Anthropic's {@code x-api-key})
 * and per-key rate limits (2 requests per hour per key), with their headers.
 */
@TestPropertySource(properties = {
        "flotilla.gateway.auth.api-keys=cfg-key-1,sdk-key,rl-key,ant-key,ant-rl-key,hdr-key",
        "flotilla.gateway.auth.api-keys-file=src/test/resources/gateway-api-keys.txt",
        "flotilla.gateway.rate-limit.requests-per-period=2",
        "flotilla.gateway.rate-limit.period=1h",
})
class GuardedGatewayTest extends GatewayTestBase {

    private static final String CHAT = "{\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}],\"max_tokens\":2}";

    private WebTestClient.ResponseSpec chat(String authorization) {
        WebTestClient.RequestBodySpec request = web.post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON);
        if (authorization != null) {
            request.header(HttpHeaders.AUTHORIZATION, authorization);
        }
        return request.bodyValue(CHAT).exchange();
    }

    private static void expect401(WebTestClient.ResponseSpec response) {
        response.expectStatus().isUnauthorized()
                .expectHeader().contentType(MediaType.APPLICATION_JSON)
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("authentication_error")
                .jsonPath("$.error.code").isEqualTo("invalid_api_key")
                .jsonPath("$.error.param").isEmpty();
    }

    @Test
    void aMissingKeyIs401() {
        expect401(chat(null));
        assertThat(cluster.router.routes).isEmpty();
    }

    @Test
    void aWrongKeyIs401() {
        expect401(chat("Bearer not-a-key"));
    }

    @Test
    void aKeyWithoutBearerIs401() {
        expect401(chat("Basic Y2ZnLWtleS0xOg=="));
    }

    @Test
    void aConfiguredKeyIsAcceptedAndAccountedByItsIdNeverItsValue() {
        String body = chat("Bearer cfg-key-1").expectStatus().isOk().expectBody(String.class).returnResult().getResponseBody();
        assertThat(body).contains("chat.completion");
        String id = cluster.workerA.generates.get(0).getRequestId();
        assertThat(cluster.workerA.generates.get(0).getTenant()).startsWith("key-").doesNotContain("cfg-key-1");
        await().atMost(WAIT).until(() -> cluster.records.of(id).isPresent());
        assertThat(cluster.records.of(id).orElseThrow().getTenant()).startsWith("key-");
    }

    @Test
    void aKeyFromTheKeysFileIsAccepted() {
        chat("Bearer file-key-1").expectStatus().isOk();
    }

    @Test
    void aKeyOverItsRateLimitGets429WithRetryAfter() {
        for (int i = 0; i < 2; i++) {
            web.get().uri("/v1/models").header(HttpHeaders.AUTHORIZATION, "Bearer rl-key").exchange().expectStatus().isOk();
        }
        web.get().uri("/v1/models").header(HttpHeaders.AUTHORIZATION, "Bearer rl-key").exchange()
                .expectStatus().isEqualTo(429)
                .expectHeader().value("Retry-After", v -> assertThat(Long.parseLong(v)).isPositive())
                .expectBody()
                .jsonPath("$.error.type").isEqualTo("rate_limit_error")
                .jsonPath("$.error.code").isEqualTo("rate_limited");
        // other keys have their own limit
        web.get().uri("/v1/models").header(HttpHeaders.AUTHORIZATION, "Bearer file-key-1").exchange().expectStatus().isOk();
    }

    @Test
    void theJavaSdkSeesAuthenticationErrors() {
        OpenAIClient wrong = OpenAIOkHttpClient.builder().baseUrl(baseUrl() + "/v1").apiKey("wrong").maxRetries(0).build();
        OpenAIClient right = OpenAIOkHttpClient.builder().baseUrl(baseUrl() + "/v1").apiKey("sdk-key").maxRetries(0).build();
        try {
            assertThatThrownBy(() -> wrong.models().list())
                    .isInstanceOfSatisfying(UnauthorizedException.class, e -> {
                        assertThat(e.statusCode()).isEqualTo(401);
                        assertThat(e.type()).contains("authentication_error");
                    });
            assertThat(right.models().list().data()).extracting(Model::id).contains("flotilla-sim");
        } finally {
            wrong.close();
            right.close();
        }
    }

    private static final String MESSAGE = "{\"max_tokens\":2,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}";

    private WebTestClient.ResponseSpec message(String apiKey) {
        WebTestClient.RequestBodySpec request = web.post().uri("/v1/messages").contentType(MediaType.APPLICATION_JSON)
                .header("anthropic-version", "2023-06-01");
        if (apiKey != null) {
            request.header("x-api-key", apiKey);
        }
        return request.bodyValue(MESSAGE).exchange();
    }

    @Test
    void anthropicClientsAuthenticateWithXApiKeyAndAreRefusedInAnthropicsShape() {
        message("ant-key").expectStatus().isOk().expectBody().jsonPath("$.type").isEqualTo("message");
        assertThat(cluster.workerA.generates.get(0).getTenant()).startsWith("key-").doesNotContain("ant-key");
        for (String key : new String[] {null, "not-a-key"}) {
            message(key).expectStatus().isUnauthorized()
                    .expectBody()
                    .jsonPath("$.type").isEqualTo("error")
                    .jsonPath("$.error.type").isEqualTo("authentication_error")
                    .jsonPath("$.error.message").isNotEmpty();
        }
        web.get().uri("/v1/models").header("x-api-key", "ant-key").exchange().expectStatus().isOk();
    }

    @Test
    void everyAnswerCarriesTheKeysRateLimitAndA429SaysRateLimitErrorOnMessages() {
        for (int remaining = 1; remaining >= 0; remaining--) {
            message("ant-rl-key").expectStatus().isOk()
                    .expectHeader().valueEquals("x-ratelimit-limit-requests", "2")
                    .expectHeader().valueEquals("x-ratelimit-remaining-requests", Integer.toString(remaining))
                    .expectHeader().value("x-ratelimit-reset-requests", v -> assertThat(v).matches("(\\d+h)?(\\d+m)?[\\d.]+s|\\d+ms"))
                    .expectHeader().valueEquals("anthropic-ratelimit-requests-limit", "2")
                    .expectHeader().valueEquals("anthropic-ratelimit-requests-remaining", Integer.toString(remaining))
                    .expectHeader().value("anthropic-ratelimit-requests-reset",
                            v -> assertThat(java.time.Instant.parse(v)).isAfter(java.time.Instant.now().minusSeconds(60)));
        }
        message("ant-rl-key").expectStatus().isEqualTo(429)
                .expectHeader().exists("Retry-After")
                .expectHeader().valueEquals("x-ratelimit-remaining-requests", "0")
                .expectBody()
                .jsonPath("$.type").isEqualTo("error")
                .jsonPath("$.error.type").isEqualTo("rate_limit_error");
    }

    @Test
    void openAiEndpointsCarryOpenAisRateLimitHeadersOnly() {
        chat("Bearer hdr-key").expectStatus().isOk()
                .expectHeader().valueEquals("x-ratelimit-limit-requests", "2")
                .expectHeader().valueEquals("x-ratelimit-remaining-requests", "1")
                .expectHeader().exists("x-ratelimit-reset-requests")
                .expectHeader().doesNotExist("anthropic-ratelimit-requests-limit")
                .expectHeader().doesNotExist("x-ratelimit-limit-tokens");
    }
}
