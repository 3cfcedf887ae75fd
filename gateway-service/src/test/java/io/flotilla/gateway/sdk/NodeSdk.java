package io.flotilla.gateway.sdk;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs test scripts of {@code gateway-service/src/test/node} with the official {@code openai} npm package:
 * dependencies are installed with {@code npm ci} into a work directory (skipped when that exact lock file
 * was installed there before), then {@code node --test} runs the scripts one at a time. Used by the
 * gateway's SDK tests and by the whole-cluster tests; callers skip, visibly, when node is not on the PATH.
 */
public final class NodeSdk {

    /** The examples of {@code sdk-examples.test.mjs}: they need a model scripted as {@link SdkExamples} describes. */
    public static final String EXAMPLES = "sdk-examples.test.mjs";

    public record Result(int exit, String output) {

        /** Every test passed (and some ran). */
        public boolean passed() {
            return exit == 0 && output.matches("(?s).*pass [1-9].*") && output.contains("fail 0");
        }
    }

    private NodeSdk() {
    }

    /** Whether node and npm are on the PATH. */
    public static boolean available() {
        return onPath("node") && onPath("npm");
    }

    /**
     * @param sources the node sources ({@code package.json}, {@code package-lock.json}, the scripts)
     * @param work    where they are copied and installed (a build directory)
     * @param env     environment of the test run (the gateway's URL, the model, …)
     */
    public static Result run(Path sources, Path work, List<String> scripts, Map<String, String> env) throws Exception {
        Files.createDirectories(work);
        boolean lockChanged = !Files.exists(work.resolve("node_modules/openai/package.json"))
                || Files.mismatch(sources.resolve("package-lock.json"), work.resolve("package-lock.json")) != -1;
        List<String> files = new ArrayList<>(List.of("package.json", "package-lock.json"));
        files.addAll(scripts);
        for (String f : files) {
            Files.copy(sources.resolve(f), work.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        if (lockChanged) {
            Result install = exec(work, List.of("npm", "ci", "--no-audit", "--no-fund"), Map.of(), 300);
            if (install.exit() != 0) {
                return new Result(install.exit(), "npm ci failed:\n" + install.output());
            }
        }
        List<String> command = new ArrayList<>(List.of("node", "--test", "--test-concurrency=1", "--test-reporter=spec"));
        command.addAll(scripts);
        return exec(work, command, env, 240);
    }

    private static Result exec(Path dir, List<String> command, Map<String, String> env, int timeoutSeconds) throws Exception {
        ProcessBuilder pb = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true);
        pb.environment().putAll(env);
        Path log = Files.createTempFile(dir.toAbsolutePath(), "run-", ".log");
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
