package io.flotilla.deploy;

import org.junit.jupiter.api.Test;
import org.testcontainers.containers.ComposeContainer;
import org.testcontainers.containers.wait.strategy.Wait;

import java.io.File;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Brings up {@code docker-compose.yml} with Testcontainers and calls the gateway. Only compiled and
 * run with {@code -Pdocker} (these machines have no Docker engine); the service jars must be
 * packaged first ({@code ./mvnw -Pdocker verify} packages them before bench's tests).
 */
class ComposeSmokeDockerTest {

    @Test
    void theComposeStackServesChatCompletions() throws Exception {
        Path root = Path.of("").toAbsolutePath().getParent();
        try (ComposeContainer stack = new ComposeContainer(new File(root.toFile(), "docker-compose.yml"))
                .withBuild(true)
                .withExposedService("gateway", 8000, Wait.forHttp("/v1/models").forPort(8000)
                        .forStatusCode(200).withStartupTimeout(Duration.ofMinutes(5)))) {
            stack.start();
            String base = "http://" + stack.getServiceHost("gateway", 8000) + ":" + stack.getServicePort("gateway", 8000);
            HttpClient http = HttpClient.newHttpClient();
            HttpResponse<String> models = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/models")).build(),
                    HttpResponse.BodyHandlers.ofString());
            assertThat(models.body()).contains("flotilla-sim");
            HttpResponse<String> chat = http.send(HttpRequest.newBuilder(URI.create(base + "/v1/chat/completions"))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(
                            "{\"model\":\"flotilla-sim\",\"max_tokens\":4,\"messages\":[{\"role\":\"user\",\"content\":\"hi\"}]}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            assertThat(chat.statusCode()).as(chat.body()).isEqualTo(200);
            assertThat(chat.headers().firstValue("x-flotilla-worker")).isPresent();
        }
    }
}
