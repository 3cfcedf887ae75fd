package io.flotilla.e2e;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.flotilla.cluster.launcher.RunningService;
import io.flotilla.protocol.Ports;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's KV-tier line as a user runs it: {@code bin/flotilla up} with a host tier and a disk tier larger than
 * a JVM's default direct memory, through the launcher's own command line ({@link FlotillaCli#execute}), and a
 * request whose prefix was pushed off the device comes back from the host tier. Once every worker was started with
 * the default -XX:MaxDirectMemorySize and exited at start-up, and no test started the tiers through the launcher.
 */
class KvTiersLauncherE2ETest {

    private static final ObjectMapper JSON = new ObjectMapper();
    /** 64 device blocks of 16 tokens: three 600-token prompts do not fit together, so the first is offloaded. */
    private static final String DEVICE_BLOCKS = "64";

    private static ClusterUnderTest cluster;

    @BeforeAll
    static void up() throws Exception {
        cluster = ClusterUnderTest.startWithLauncher("flotilla-e2e-tiers-", "--workers", "1", "--kv-blocks", DEVICE_BLOCKS,
                "--kvbm-host", "1GiB", "--kvbm-disk", "2GiB", "--timeout", "240");
    }

    @AfterAll
    static void down() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void theWorkerStartsWithItsTiersAndAnOffloadedPrefixComesBackFromHostMemory() throws Exception {
        RunningService worker = cluster.started().stream().filter(s -> s.name().equals("worker-0")).findFirst().orElseThrow();
        assertThat(ClusterUnderTest.commandLine(worker.pid()).orElseThrow()).as("the worker JVM's flags")
                .contains("-XX:MaxDirectMemorySize=1281m");
        await().atMost(Duration.ofSeconds(30)).until(() -> cluster.routable().size() == 1);
        assertThat(ClusterUnderTest.workerMetric("worker-0", "flotilla_worker_kvbm_capacity_blocks"))
                .as("host and disk tiers' capacity").isGreaterThan(0);

        String first = prompt(1);
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500))
                .until(() -> chat(first).statusCode() == 200);
        chat(prompt(2));
        chat(prompt(3));
        await("the first prompt's blocks offloaded").atMost(Duration.ofSeconds(20))
                .until(() -> ClusterUnderTest.workerMetric("worker-0", "flotilla_worker_kvbm_offloaded_blocks_total") > 0);

        HttpResponse<String> again = chat(first);
        assertThat(again.statusCode()).isEqualTo(200);
        JsonNode usage = JSON.readTree(again.body()).get("usage");
        assertThat(usage.get("prompt_tokens_details").get("cached_tokens").asInt())
                .as("the repeated prompt's prefix is a hit").isGreaterThan(usage.get("prompt_tokens").asInt() / 2);
        assertThat(ClusterUnderTest.workerMetric("worker-0", "flotilla_worker_kvbm_onboarded_blocks_total"))
                .as("blocks brought back from the host tier").isGreaterThan(0);
    }

    /** About 600 tokens of seeded words, different for each {@code seed}. */
    private static String prompt(int seed) {
        Random random = new Random(seed);
        List<String> words = List.of("river", "lantern", "quartz", "meadow", "harbor", "violet", "cinder", "orbit",
                "thistle", "copper", "glacier", "ember", "falcon", "willow", "basalt", "saffron");
        StringBuilder sb = new StringBuilder("Session ").append(seed).append(':');
        for (int i = 0; i < 560; i++) {
            sb.append(' ').append(words.get(random.nextInt(words.size())));
        }
        return sb.toString();
    }

    private static HttpResponse<String> chat(String content) throws Exception {
        String body = JSON.writeValueAsString(JSON.createObjectNode()
                .put("model", "flotilla-sim").put("max_tokens", 4)
                .set("messages", JSON.createArrayNode().add(JSON.createObjectNode().put("role", "user").put("content", content))));
        return ClusterUnderTest.HTTP.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + Ports.GATEWAY_HTTP
                        + "/v1/chat/completions")).header("Content-Type", "application/json").timeout(Duration.ofSeconds(60))
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
