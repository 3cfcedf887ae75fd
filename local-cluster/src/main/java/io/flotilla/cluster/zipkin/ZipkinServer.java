package io.flotilla.cluster.zipkin;

import io.flotilla.cluster.kafka.KafkaBroker;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A Zipkin server (trace store and UI) run as a child JVM from {@code io.zipkin:zipkin-server}'s runnable jar, as Kafka
 * runs from the jars the build resolves: {@code bin/flotilla up --tracing} copies the jar from Maven Central to
 * {@code local-cluster/target/zipkin/zipkin-server-exec.jar} the first time. In-memory storage (at most
 * {@link #MAX_SPANS} spans) on {@link #PORT}, outliving the launcher in its own session; {@code bin/flotilla down}
 * stops it. About 14 s to {@code /health} on a busy 2-core machine.
 */
public final class ZipkinServer {

    public static final int PORT = 9411;
    static final int MAX_SPANS = 100_000;
    private static final String HEAP = "256m";

    private final Path jar;
    private final Path dir;
    private final int port;
    private final Duration startTimeout;
    private Process process;

    /**
     * @param jar the runnable jar ({@link #jarIn})
     * @param dir directory it owns (its log)
     */
    public ZipkinServer(Path jar, Path dir, int port, Duration startTimeout) {
        this.jar = jar;
        this.dir = dir;
        this.port = port;
        this.startTimeout = startTimeout;
    }

    /** Where the build puts the runnable jar in a checkout at {@code root}. */
    public static Path jarIn(Path root) {
        return root.resolve("local-cluster/target/zipkin/zipkin-server-exec.jar");
    }

    /** The span endpoint services post to ({@code management.tracing.export.zipkin.endpoint}). */
    public static String spansUrl(int port) {
        return "http://127.0.0.1:" + port + "/api/v2/spans";
    }

    /** The UI. */
    public static String uiUrl(int port) {
        return "http://127.0.0.1:" + port + "/zipkin/";
    }

    /** Starts the server and waits until {@code /health} answers 200. */
    public synchronized ZipkinServer start() {
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException("no Zipkin server jar at " + jar + "; fetch it with ./mvnw -pl local-cluster dependency:copy@copy-zipkin-server");
        }
        try {
            KafkaBroker.deleteRecursively(dir);
            Files.createDirectories(dir);
            List<String> cmd = new ArrayList<>();
            if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
                cmd.add("/usr/bin/setsid"); // own session: a closing terminal does not take it down
            }
            cmd.addAll(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xms16m", "-Xmx" + HEAP, "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-jar", jar.toString()));
            ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile().toFile()))
                    .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
            pb.environment().put("QUERY_PORT", Integer.toString(port));
            pb.environment().put("STORAGE_TYPE", "mem");
            pb.environment().put("MEM_MAX_SPANS", Integer.toString(MAX_SPANS));
            pb.environment().put("JAVA_OPTS", "");
            process = pb.start();
            awaitHealthy();
            return this;
        } catch (IOException e) {
            stop();
            throw new UncheckedIOException("cannot start the Zipkin server: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            stop();
            throw e;
        }
    }

    private void awaitHealthy() {
        HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
        Instant deadline = Instant.now().plus(startTimeout);
        while (Instant.now().isBefore(deadline)) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the Zipkin server exited during start-up; see " + logFile());
            }
            try {
                HttpResponse<Void> r = http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                        .timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
                if (r.statusCode() == 200) {
                    return;
                }
            } catch (IOException notYet) {
                // not listening yet
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the Zipkin server started", e);
            }
            try {
                Thread.sleep(250);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the Zipkin server started", e);
            }
        }
        throw new IllegalStateException("the Zipkin server did not answer /health within " + startTimeout.toSeconds()
                + " s; see " + logFile());
    }

    public long pid() {
        return process == null ? -1 : process.pid();
    }

    public Path logFile() {
        return dir.resolve("zipkin.log");
    }

    private void stop() {
        if (process != null) {
            process.destroyForcibly();
        }
    }
}
