package io.flotilla.planner.profile;

import com.sun.net.httpserver.HttpServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The profiler's HTTP client against a fake gateway (JDK HttpServer) that streams the OpenAI SSE
 * format. Time comes from a fake nano clock (+1 ms per reading), so the measured values are exact.
 * (Against a real cluster the profiler has not been run here: that needs {@code bin/flotilla up}.)
 */
class CompletionsClientTest {

    private HttpServer server;
    private final AtomicReference<String> body = new AtomicReference<>();
    private volatile int status = 200;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/v1/completions", exchange -> {
            body.set(new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8));
            String sse = status != 200 ? "{\"error\": {\"message\": \"overloaded\"}}" : String.join("\n\n",
                    "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":null}],\"usage\":null}",
                    "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"bc\",\"finish_reason\":null}],\"usage\":null}",
                    "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"d\",\"finish_reason\":null}],\"usage\":null}",
                    "data: {\"object\":\"text_completion\",\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}],\"usage\":null}",
                    "data: {\"object\":\"text_completion\",\"choices\":[],\"usage\":{\"prompt_tokens\":4,\"completion_tokens\":5,\"total_tokens\":9}}",
                    "data: [DONE]", "");
            byte[] bytes = sse.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", status == 200 ? "text/event-stream" : "application/json");
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private CompletionsClient client() {
        AtomicLong nanos = new AtomicLong();
        return new CompletionsClient(URI.create("http://127.0.0.1:" + server.getAddress().getPort()), "flotilla-sim",
                Duration.ofSeconds(10), () -> nanos.addAndGet(1_000_000));
    }

    @Test
    void sendsATokenIdStreamingRequestAndMeasuresTheStream() {
        Measurement m = client().measure(new int[] {11, 12, 13, 14}, 5);

        JsonNode sent = JsonMapper.builder().build().readTree(body.get());
        assertThat(sent.get("model").stringValue()).isEqualTo("flotilla-sim");
        assertThat(sent.get("prompt").isArray()).isTrue();
        assertThat(sent.get("prompt").size()).isEqualTo(4);
        assertThat(sent.get("prompt").get(0).asInt()).isEqualTo(11);
        assertThat(sent.get("max_tokens").asInt()).isEqualTo(5);
        assertThat(sent.get("stream").asBoolean()).isTrue();
        assertThat(sent.get("ignore_eos").asBoolean()).isTrue();
        assertThat(sent.get("stream_options").get("include_usage").asBoolean()).isTrue();

        // Clock readings: start 1 ms, token chunks at 2, 3, 4 ms; 5 tokens by the usage chunk.
        assertThat(m.tokens()).isEqualTo(5);
        assertThat(m.ttftMs()).isEqualTo(1.0);
        assertThat(m.itlMs()).isEqualTo(2.0 / 4);
    }

    @Test
    void theProfileCommandSweepsTheGatewayAndWritesAProfile(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws IOException {
        java.nio.file.Path out = dir.resolve("profile.json");
        int exit = new picocli.CommandLine(new ProfileCli()).execute("--gateway", "http://127.0.0.1:" + server.getAddress().getPort(),
                "--out", out.toString(), "--isl", "16,32", "--prefill-concurrency", "1,2", "--context", "64",
                "--decode-concurrency", "1,2", "--decode-tokens", "5", "--requests", "2");
        assertThat(exit).isZero();
        io.flotilla.planner.model.PerformanceProfile p = io.flotilla.planner.model.ProfileJson.read(out);
        assertThat(p.prefillTtftMs().xs()).containsExactly(16, 32);
        assertThat(p.decodeItlMs().ys()).containsExactly(1, 2);
        assertThat(p.kvTokens()).isEqualTo(131072);
    }

    @Test
    void anErrorAnswerFailsTheRequest() {
        status = 503;
        assertThatThrownBy(() -> client().measure(new int[] {1}, 1)).hasMessageContaining("503").hasMessageContaining("overloaded");
    }
}
