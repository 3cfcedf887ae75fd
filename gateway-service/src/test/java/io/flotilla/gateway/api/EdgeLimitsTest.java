package io.flotilla.gateway.api;

import io.flotilla.gateway.GatewayTestBase;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The edges in the API's terms (max-request-size 64KB here, max-header-size 16KB by default): a body
 * over the limit is a 413 with an OpenAI error body whether its length is declared or it is chunked,
 * and however large it is; oversized headers are a 431 with an error body.
 */
class EdgeLimitsTest extends GatewayTestBase {

    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private HttpRequest.Builder post() {
        return HttpRequest.newBuilder(URI.create(baseUrl() + "/v1/completions")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/json");
    }

    private static byte[] body(int bytes) {
        byte[] b = new byte[bytes];
        java.util.Arrays.fill(b, (byte) ' ');
        byte[] head = "{\"prompt\":\"hi\",\"max_tokens\":1}".getBytes();
        System.arraycopy(head, 0, b, 0, head.length);
        return b;
    }

    @Test
    void aDeclaredBodyOver64MbIs413WithAnErrorBodyNotAReset() throws Exception {
        HttpResponse<String> r = HTTP.send(post().POST(HttpRequest.BodyPublishers.ofByteArray(body(64 << 20))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(r.body()).contains("\"code\":\"request_too_large\"", "67108864 bytes", "65536");
    }

    @Test
    void aChunkedBodyOverTheLimitIs413() throws Exception {
        HttpResponse<String> r = HTTP.send(post().POST(HttpRequest.BodyPublishers.ofInputStream(
                () -> new ByteArrayInputStream(body(1 << 20)))).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(413);
        assertThat(r.body()).contains("\"type\":\"invalid_request_error\"", "\"code\":\"request_too_large\"");
    }

    @Test
    void aBodyJustUnderTheLimitIsRead() throws Exception {
        HttpResponse<String> r = HTTP.send(post().POST(HttpRequest.BodyPublishers.ofByteArray(body(60_000))).build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
    }

    @Test
    void oversizedHeadersAre431WithAnErrorBody() throws Exception {
        HttpResponse<String> r = HTTP.send(post().header("x-padding", "p".repeat(32 * 1024))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body(100))).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).isEqualTo(431);
        assertThat(r.headers().firstValue("content-type")).hasValueSatisfying(v -> assertThat(v).contains("application/json"));
        assertThat(r.body()).contains("\"code\":\"request_header_fields_too_large\"", "16384 bytes");
    }
}
