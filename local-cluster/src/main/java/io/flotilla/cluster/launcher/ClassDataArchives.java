package io.flotilla.cluster.launcher;

import io.flotilla.cluster.kafka.KafkaBroker;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One class-data-sharing archive per service jar (JDK 17's dynamic CDS: {@code -XX:ArchiveClassesAtExit} at a
 * training run, {@code -XX:SharedArchiveFile} after), so a service JVM maps the classes it loads at start-up
 * instead of reading, parsing and verifying them again.
 *
 * <p>For module M the files live in {@code M/target/cds/}: {@code app/} is the exec jar extracted by Spring Boot's
 * {@code -Djarmode=tools extract} (CDS cannot share classes read from the nested jars of an uber jar),
 * {@code app.jsa} the archive, {@code training.log} the training run's output, and {@code stamp} what they were
 * built from: the exec jar's size and modification time and the JVM. A stamp that differs (the jar was rebuilt,
 * another JDK) makes the next {@code up} build them again; {@code mvn clean} removes them with the jar.
 *
 * <p>The training run is the service itself with a cluster's arguments and {@code -Dspring.context.exit=onRefresh}:
 * Spring builds every bean and halts before any lifecycle starts (no listener polls Kafka, no server accepts),
 * and the JVM writes the classes loaded so far. A run that fails or times out is recorded in the stamp, reported
 * once, and the service starts from its exec jar without an archive until the jar changes: an archive never
 * decides whether a cluster starts. A JVM that cannot map an archive (another JDK build) runs without it.
 */
final class ClassDataArchives {

    /** Longest a training run may take; one takes 10-40 s on two busy cores. */
    static final Duration TRAINING_TIMEOUT = Duration.ofSeconds(180);

    private final Path root;
    private final String javaBinary;

    /**
     * @param root repository root: module M's jar is {@code M/target/M-exec.jar}
     * @param javaBinary the java binary the services run on
     */
    ClassDataArchives(Path root, String javaBinary) {
        this.root = root;
        this.javaBinary = javaBinary;
    }

    Path jarOf(String module) {
        return root.resolve(module).resolve("target").resolve(module + "-exec.jar");
    }

    private Path dirOf(String module) {
        return root.resolve(module).resolve("target").resolve("cds");
    }

    private Path extractedJar(String module) {
        return dirOf(module).resolve("app").resolve(module + "-exec.jar");
    }

    private Path archive(String module) {
        return dirOf(module).resolve("app.jsa");
    }

    /**
     * What follows the JVM flags on the command line of {@code module}: with a current archive
     * {@code -XX:SharedArchiveFile=… -jar <extracted jar>}, otherwise {@code -jar <exec jar>}.
     */
    List<String> launchArgs(String module) {
        if ("ok".equals(stampStatus(module))) {
            return List.of("-XX:SharedArchiveFile=" + archive(module), "-jar", extractedJar(module).toString());
        }
        return List.of("-jar", jarOf(module).toString());
    }

    /**
     * "ok" or "failed" when the stamp matches the module's current jar and this JVM; null when absent or stale.
     * A jar rebuilt with the same bytes (the build is reproducible) keeps its archive: when only its modification
     * time differs, its SHA-256 decides, and a match renews the stamp.
     */
    String stampStatus(String module) {
        Properties stamp = readStamp(module);
        if (stamp.isEmpty()) {
            return null;
        }
        String status = stamp.getProperty("status");
        Properties now = expectedStamp(module, status, stamp.getProperty("jar.sha256"));
        if (stamp.equals(now)) {
            return status;
        }
        now.setProperty("jar.modified", stamp.getProperty("jar.modified", ""));
        if (!stamp.equals(now) || !stamp.getProperty("jar.sha256", "").equals(sha256(jarOf(module)))) {
            return null;
        }
        try {
            writeStamp(module, status, stamp.getProperty("jar.sha256"));
        } catch (IOException | UncheckedIOException e) {
            // the digest is computed again next time, which is all that is lost
        }
        return status;
    }

    /**
     * Builds, for each module among {@code specs} whose archive is missing or stale, its archive by a training run
     * of the first spec of that module, {@code jvmFlags} as the service runs with; runs as many at once as there are
     * processors. Reports what it does and what failed on {@code out}; never throws for a failed archive.
     * Without {@code --no-cds}, {@code up} calls this once Kafka is up and before it starts a service.
     */
    Duration prepare(List<ServiceSpec> specs, Function<ServiceSpec, List<String>> jvmFlags, PrintStream out) {
        Map<String, ServiceSpec> toBuild = new LinkedHashMap<>();
        for (ServiceSpec spec : specs) {
            if (!spec.module().isEmpty() && Files.isRegularFile(jarOf(spec.module())) && stampStatus(spec.module()) == null) {
                toBuild.putIfAbsent(spec.module(), spec);
            }
        }
        if (toBuild.isEmpty()) {
            return Duration.ZERO;
        }
        out.printf("building class-data archives for %s (once per jar, %d s at most) ...%n",
                String.join(", ", toBuild.keySet()), TRAINING_TIMEOUT.toSeconds());
        long begin = System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(Math.min(toBuild.size(), Runtime.getRuntime().availableProcessors()));
        try {
            List<Future<String>> results = new ArrayList<>();
            for (ServiceSpec spec : toBuild.values()) {
                results.add(pool.submit(() -> build(spec, jvmFlags.apply(spec))));
            }
            for (Future<String> r : results) {
                String failure = r.get();
                if (failure != null) {
                    out.println("flotilla: warning: " + failure + "; it starts without class-data sharing");
                }
            }
        } catch (ExecutionException e) {
            out.println("flotilla: warning: class-data archive not built: " + e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LauncherException("interrupted");
        } finally {
            pool.shutdownNow();
        }
        return Duration.ofNanos(System.nanoTime() - begin);
    }

    /** Extracts and trains one module; null on success, else what went wrong (also written to its stamp). */
    private String build(ServiceSpec spec, List<String> jvmFlags) {
        String module = spec.module();
        Path dir = dirOf(module);
        Path log = dir.resolve("training.log");
        try {
            KafkaBroker.deleteRecursively(dir);
            Files.createDirectories(dir);
            Path tmp = dir.resolve("app.jsa.tmp");
            int extracted = run(List.of(javaBinary, "-Djarmode=tools", "-jar", jarOf(module).toString(), "extract",
                    "--destination", dir.resolve("app").toString()), log, Duration.ofSeconds(120));
            if (extracted != 0) {
                return fail(module, "extracting " + jarOf(module).getFileName() + " exited with " + extracted + " (see " + log + ")");
            }
            List<String> cmd = new ArrayList<>();
            cmd.add(javaBinary);
            cmd.addAll(jvmFlags);
            cmd.addAll(List.of("-XX:ArchiveClassesAtExit=" + tmp, "-Xlog:cds=error", "-Xlog:cds+dynamic=error",
                    "-Dspring.context.exit=onRefresh", "-jar", extractedJar(module).toString()));
            cmd.addAll(spec.args());
            int trained = run(cmd, log, TRAINING_TIMEOUT);
            if (trained != 0 || !Files.isRegularFile(tmp) || Files.size(tmp) == 0) {
                return fail(module, "class-data training run of " + module + (trained < 0 ? " timed out" : " exited with " + trained)
                        + " (see " + log + ")");
            }
            Files.move(tmp, archive(module), StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            writeStamp(module, "ok", sha256(jarOf(module)));
            return null;
        } catch (IOException | UncheckedIOException e) {
            return fail(module, "class-data archive of " + module + " not built: " + e.getMessage());
        }
    }

    private String fail(String module, String why) {
        try {
            writeStamp(module, "failed", sha256(jarOf(module)));
        } catch (IOException | UncheckedIOException ignored) {
            // without a stamp the next up tries again, which is all that is lost
        }
        return why;
    }

    /** Runs {@code cmd} appending its output to {@code log}; its exit status, or -1 when it ran past {@code timeout}. */
    private int run(List<String> cmd, Path log, Duration timeout) throws IOException {
        Process p = new ProcessBuilder(cmd).directory(root.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        try {
            if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                return -1;
            }
            return p.exitValue();
        } catch (InterruptedException e) {
            p.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new LauncherException("interrupted");
        }
    }

    private Properties expectedStamp(String module, String status, String sha256) {
        Properties p = new Properties();
        Path jar = jarOf(module);
        try {
            p.setProperty("jar.size", Long.toString(Files.size(jar)));
            p.setProperty("jar.modified", Long.toString(Files.getLastModifiedTime(jar).toMillis()));
        } catch (IOException e) {
            p.setProperty("jar.size", "missing");
        }
        p.setProperty("jar.sha256", String.valueOf(sha256));
        p.setProperty("java", javaBinary);
        p.setProperty("java.vm.version", System.getProperty("java.vm.version"));
        p.setProperty("status", String.valueOf(status));
        return p;
    }

    private static String sha256(Path file) {
        try (var in = Files.newInputStream(file)) {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            byte[] buf = new byte[1 << 16];
            for (int n; (n = in.read(buf)) > 0; ) {
                digest.update(buf, 0, n);
            }
            return HexFormat.of().formatHex(digest.digest());
        } catch (IOException e) {
            return "unreadable";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
    }

    private Properties readStamp(String module) {
        Properties p = new Properties();
        Path file = dirOf(module).resolve("stamp");
        if (Files.isRegularFile(file)) {
            try (Reader r = Files.newBufferedReader(file)) {
                p.load(r);
            } catch (IOException e) {
                p.clear();
            }
        }
        return p;
    }

    private void writeStamp(String module, String status, String sha256) throws IOException {
        Path file = dirOf(module).resolve("stamp");
        Path tmp = file.resolveSibling("stamp.tmp");
        try (Writer w = Files.newBufferedWriter(tmp)) {
            expectedStamp(module, status, sha256).store(w, "class-data archive of " + jarOf(module).getFileName());
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }
}
