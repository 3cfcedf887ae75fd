package io.flotilla.gateway.sdk;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.Sse;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code src/test/node/openai-client.test.mjs} and {@code sdk-examples.test.mjs} (the official
 * {@code openai} npm package, with {@code node --test}) against the gateway, the fake worker playing the
 * examples' scripted model. Skipped, visibly, only when node is not on the PATH.
 */
class NodeOpenAiClientTest extends GatewayTestBase {

    @Test
    void theOfficialNodeSdkWorksAgainstTheGateway() throws Exception {
        Assumptions.assumeTrue(NodeSdk.available(), "node or npm is not on PATH");
        String expected = Sse.JSON.writeValueAsString(Map.of(
                "2", FakeCluster.expectedText(2), "5", FakeCluster.expectedText(5), "12", FakeCluster.expectedText(12)));
        cluster.workerA.replyBy((prompt, request) -> request.getSampling().hasStructuredOutput() ? SdkExamples.BOOKS_JSON
                : prompt.contains(SdkExamples.TOOL_RESULT_MARK) ? SdkExamples.FINAL_ANSWER
                : prompt.contains(SdkExamples.QUESTION) ? SdkExamples.CALLS_HERMES : null);
        NodeSdk.Result tests = NodeSdk.run(Path.of("src/test/node"), Path.of("target/node-client"),
                List.of("openai-client.test.mjs", NodeSdk.EXAMPLES),
                Map.of("GATEWAY_BASE_URL", baseUrl() + "/v1", "EXPECTED_TEXT", expected, "MODEL", "flotilla-sim",
                        "SDK_EXAMPLES", SdkExamples.nodeEnvironment()));
        assertThat(tests.passed()).as("node --test failed:%n%s", tests.output()).isTrue();
        System.out.println("node --test openai-client.test.mjs " + NodeSdk.EXAMPLES + ": all passed");
    }
}
