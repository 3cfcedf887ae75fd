package io.flotilla.cluster.launcher;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
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
import java.util.Optional;

/** Starts service JVMs, checks their health and stops them. */
final class ProcessControl {

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();

    private final Path root;
    private final Path logDir;
    private final ClassDataArchives archives;

    ProcessControl(Path root, Path logDir) {
        this.root = root;
        this.logDir = logDir;
        this.archives = new ClassDataArchives(root, javaBinary());
    }

    static String javaBinary() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * The JVM flags of a service (before {@code -jar}); its training run for a class-data archive uses the same.
     * MetaspaceSize: without it every service JVM stops for a full GC (100-600 ms each on two loaded cores) each
     * time class loading crosses the next metaspace threshold, two or three times in its first minute; all of them
     * at once is what the first requests after `up` met. Xms16m: a heap grows as it is used, and a start-up
     * needs less than the 64m that were committed (and touched) from the first second. Except the router and the
     * indexer, whose heaps start at their maximum: they are on every request's path, and a heap that grows under
     * load grows through full collections (the router's went 11 → 27 → 46 → 79 → 134 MB in the first minute of
     * the Mooncake sample at ≈ 5 req/s, 87–785 ms each on two loaded cores, every Route in flight stopped).
     * A worker adds {@code workerJit}'s flags.
     */
    static List<String> jvmFlags(ServiceSpec spec, WorkerJit workerJit) {
        boolean requestPath = spec.module().equals("router-service") || spec.module().equals("kv-indexer-service");
        String initialHeap = requestPath ? spec.heap() : "16m";
        List<String> flags = new ArrayList<>(List.of("-Xms" + initialHeap, "-Xmx" + spec.heap(), "-XX:+UseSerialGC", "-Xss512k",
                "-XX:MetaspaceSize=128m", "-XX:MaxMetaspaceSize=160m", "-XX:ReservedCodeCacheSize=64m",
                "-XX:MaxDirectMemorySize=" + spec.directMemory(),
                "-XX:+ExitOnOutOfMemoryError", "-Djava.awt.headless=true"));
        if (spec.isWorker()) {
            flags.addAll(workerJit.jvmFlags());
        }
        return flags;
    }

    /** Builds the class-data archives {@code specs} lack (see {@link ClassDataArchives#prepare}); how long that took. */
    Duration prepareArchives(List<ServiceSpec> specs, WorkerJit workerJit, java.io.PrintStream out) {
        return archives.prepare(specs, spec -> jvmFlags(spec, workerJit), out);
    }

    /**
     * Starts one service in its own session (so a closing terminal or Ctrl-C does not reach it); with
     * {@code classDataSharing}, from its class-data archive when one is current; a worker compiling as
     * {@code workerJit} says.
     */
    RunningService launch(ServiceSpec spec, boolean classDataSharing, WorkerJit workerJit) throws IOException {
        Path jar = archives.jarOf(spec.module());
        if (!Files.isRegularFile(jar)) {
            throw new LauncherException(spec.name() + ": " + root.relativize(jar) + " is missing; run ./mvnw -DskipTests package");
        }
        Files.createDirectories(logDir);
        Path log = logDir.resolve(spec.name() + ".log");
        List<String> cmd = new ArrayList<>();
        if (Files.isExecutable(Path.of("/usr/bin/setsid"))) {
            cmd.add("/usr/bin/setsid");
        }
        cmd.add(javaBinary());
        cmd.addAll(jvmFlags(spec, workerJit));
        cmd.addAll(classDataSharing ? archives.launchArgs(spec.module()) : List.of("-jar", jar.toString()));
        cmd.addAll(spec.args());
        ProcessBuilder pb = new ProcessBuilder(cmd);
        limitMallocArenas(pb);
        Process p = pb
                .directory(root.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.to(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .start();
        Instant started = p.toHandle().info().startInstant().orElse(Instant.now());
        return new RunningService(spec.name(), p.pid(), started, spec.portSummary(), spec.managementPort(), log);
    }

    /**
     * glibc gives each thread that allocates its own 64 MiB malloc arena (up to 8 per core); a JVM's dozens of
     * threads then keep freed native memory in many half-used arenas. Two arenas cost a service nothing measurable
     * at start-up and keep ~10 MB of RSS each (docs/benchmarks.md). An operator's own setting wins.
     */
    static void limitMallocArenas(ProcessBuilder pb) {
        pb.environment().putIfAbsent("MALLOC_ARENA_MAX", "2");
    }

    /** HTTP status of /actuator/health, or empty when nothing answers. */
    static Optional<Integer> health(int managementPort) {
        if (managementPort <= 0) {
            return Optional.empty();
        }
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/health"))
                    .timeout(Duration.ofSeconds(2)).GET().build();
            return Optional.of(HTTP.send(req, HttpResponse.BodyHandlers.discarding()).statusCode());
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** The status of health component {@code name} ({@code UP}, {@code DOWN}, …), "-" when it has none, "?" when unreadable. */
    static String component(int managementPort, String name) {
        return healthJson(managementPort).map(root -> root.path("components").path(name).path("status").asText("-"))
                .orElse("?");
    }

    /**
     * The components of /actuator/health that are not UP, with their details (e.g. {@code kafka: DOWN
     * {"problem":"authentication: …"}}), one per line; empty when all are UP or the health cannot be read.
     */
    static String unhealthyComponents(int managementPort) {
        return healthJson(managementPort).map(root -> {
            StringBuilder out = new StringBuilder();
            root.path("components").properties().forEach(e -> {
                String status = e.getValue().path("status").asText();
                if (!"UP".equals(status)) {
                    out.append("\n  health ").append(e.getKey()).append(": ").append(status).append(' ')
                            .append(e.getValue().path("details"));
                }
            });
            return out.toString();
        }).orElse("");
    }

    private static Optional<com.fasterxml.jackson.databind.JsonNode> healthJson(int managementPort) {
        try {
            HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + managementPort + "/actuator/health"))
                    .timeout(Duration.ofSeconds(2)).GET().build();
            return Optional.of(new com.fasterxml.jackson.databind.ObjectMapper()
                    .readTree(HTTP.send(req, HttpResponse.BodyHandlers.ofString()).body()));
        } catch (IOException e) {
            return Optional.empty();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Optional.empty();
        }
    }

    /** True when something already listens on, or holds, the port. */
    static boolean portInUse(int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), port));
            return false;
        } catch (IOException e) {
            return true;
        }
    }

    /** SIGTERM to each live process, then SIGKILL to whatever is left after the grace period. */
    static void stop(List<RunningService> services, Duration grace) {
        List<ProcessHandle> live = new ArrayList<>();
        for (RunningService s : services) {
            s.handle().ifPresent(h -> {
                h.destroy();
                live.add(h);
            });
        }
        long deadline = System.nanoTime() + grace.toNanos();
        while (System.nanoTime() < deadline && live.stream().anyMatch(ProcessHandle::isAlive)) {
            sleep(100);
        }
        for (ProcessHandle h : live) {
            if (h.isAlive()) {
                h.destroyForcibly();
            }
        }
        long killDeadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (System.nanoTime() < killDeadline && live.stream().anyMatch(ProcessHandle::isAlive)) {
            sleep(50);
        }
    }

    static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LauncherException("interrupted");
        }
    }

    /** Last lines of a log file, for error messages. */
    static List<String> tail(Path log, int lines) {
        try {
            List<String> all = Files.readAllLines(log);
            return all.subList(Math.max(0, all.size() - lines), all.size());
        } catch (IOException e) {
            return List.of();
        }
    }
}
