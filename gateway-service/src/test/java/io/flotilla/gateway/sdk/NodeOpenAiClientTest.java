package io.flotilla.gateway.sdk;

import io.flotilla.gateway.GatewayTestBase;
import io.flotilla.gateway.fakes.FakeCluster;
import io.flotilla.gateway.fakes.Sse;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs {@code src/test/node/openai-client.test.mjs} (the official {@code openai} npm package, with
 * {@code node --test}) against the gateway. Dependencies are installed with {@code npm ci} into
 * {@code target/node-client} (skipped when that exact lock file was installed before). Skipped,
 * visibly, only when node is not on the PATH.
 */
class NodeOpenAiClientTest extends GatewayTestBase {

    private static final Path SOURCES = Path.of("src/test/node");
    private static final Path WORK = Path.of("target/node-client");
    private static final List<String> FILES = List.of("package.json", "package-lock.json", "openai-client.test.mjs");

    @Test
    void theOfficialNodeSdkWorksAgainstTheGateway() throws Exception {
        Assumptions.assumeTrue(onPath("node"), "node is not on PATH");
        Assumptions.assumeTrue(onPath("npm"), "npm is not on PATH");
        Files.createDirectories(WORK);
        boolean lockChanged = !Files.exists(WORK.resolve("node_modules/openai/package.json"))
                || Files.mismatch(SOURCES.resolve("package-lock.json"), WORK.resolve("package-lock.json")) != -1;
        for (String f : FILES) {
            Files.copy(SOURCES.resolve(f), WORK.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        if (lockChanged) {
            Result install = run(List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), 300);
            assertThat(install.exit).as("npm ci failed:%n%s", install.output).isZero();
        }

        String expected = Sse.JSON.writeValueAsString(Map.of(
                "2", FakeCluster.expectedText(2), "5", FakeCluster.expectedText(5), "12", FakeCluster.expectedText(12)));
        String examples = Sse.JSON.writeValueAsString(Map.of("question", SdkExamples.QUESTION,
                "finalAnswer", SdkExamples.FINAL_ANSWER));
        cluster.workerA.replyBy((prompt, request) -> request.getSampling().hasStructuredOutput() ? SdkExamples.BOOKS_JSON
                : prompt.contains(SdkExamples.TOOL_RESULT_MARK) ? SdkExamples.FINAL_ANSWER
                : prompt.contains(SdkExamples.QUESTION) ? SdkExamples.CALLS_HERMES : null);
        Result tests = run(List.of("node", "--test", "--test-concurrency=1", "--test-reporter=spec", "openai-client.test.mjs"),
                Map.of("GATEWAY_BASE_URL", baseUrl() + "/v1", "EXPECTED_TEXT", expected, "SDK_EXAMPLES", examples), 180);
        assertThat(tests.exit).as("node --test failed:%n%s", tests.output).isZero();
        assertThat(tests.output).as(tests.output).containsPattern("pass [1-9]").contains("fail 0");
        System.out.println("node --test openai-client.test.mjs: all passed");
    }

    private record Result(int exit, String output) {
    }

    private static Result run(List<String> command, Map<String, String> env, int timeoutSeconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(WORK.toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Path log = Files.createTempFile(WORK.toAbsolutePath(), "run-", ".log");
        pb.redirectOutput(log.toFile());
        try {
            Process p = pb.start();
            if (!p.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return new Result(-1, "timed out after " + timeoutSeconds + " s\n" + Files.readString(log, StandardCharsets.UTF_8));
            }
            return new Result(p.exitValue(), Files.readString(log, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(log);
        }
    }

    private static boolean onPath(String tool) {
        try {
            Process p = new ProcessBuilder(tool, "--version").redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
