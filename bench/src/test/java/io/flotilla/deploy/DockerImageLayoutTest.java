package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.flotilla.deploy.FlotillaServices.ServiceSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What can be checked of an image without Docker (none runs here, so no image is built): the Dockerfile's
 * extraction command, run on the packaged exec jar, yields every layer directory its {@code COPY --from}
 * steps take; the layers together hold the jar the ENTRYPOINT runs, every jar its manifest Class-Path
 * names and its main class; the archive the ENTRYPOINT maps is the one the training run writes in the
 * same directory. Needs {@code ./mvnw package} (the exec jars); skipped where a jar is missing.
 */
class DockerImageLayoutTest {

    private static final Pattern FROM_STAGE = Pattern.compile("(?m)^FROM \\S+ AS (\\S+)$");
    private static final Pattern COPY_JAR = Pattern.compile("(?m)^COPY (target/\\S+\\.jar) (\\S+)$");
    private static final Pattern EXTRACT = Pattern.compile("(?m)^RUN java (-Djarmode=tools -jar (\\S+) extract .*)$");
    private static final Pattern COPY_LAYER = Pattern.compile("(?m)^COPY --from=(\\S+) --chown=10001:10001 (\\S+)/ \\./$");
    private static final Pattern WORKDIR = Pattern.compile("(?m)^WORKDIR (\\S+)$");
    private static final Pattern TRAINING = Pattern.compile("-XX:ArchiveClassesAtExit=(\\S+)");
    private static final Pattern ENTRYPOINT =
            Pattern.compile("(?m)^ENTRYPOINT \\[.*exec java -XX:SharedArchiveFile=(\\S+) \\$JAVA_OPTS -jar (\\S+)\"\\]$");

    static Stream<ServiceSpec> services() {
        return Stream.of(FlotillaServices.gateway(), FlotillaServices.router(), FlotillaServices.kvIndexer(),
                FlotillaServices.planner(), FlotillaServices.worker(0));
    }

    @ParameterizedTest
    @MethodSource("services")
    @Timeout(300)
    void extractedLayersHoldWhatTheEntrypointRuns(ServiceSpec spec, @TempDir Path tmp) throws Exception {
        Path moduleDir = Descriptors.repoRoot().resolve(spec.module());
        String dockerfile = Files.readString(moduleDir.resolve("Dockerfile"));
        Matcher stage = FROM_STAGE.matcher(dockerfile);
        assertThat(stage.find()).as("a named build stage").isTrue();
        Matcher copyJar = COPY_JAR.matcher(dockerfile);
        assertThat(copyJar.find()).as("COPY of the exec jar").isTrue();
        Path execJar = moduleDir.resolve(copyJar.group(1));
        Assumptions.assumeTrue(Files.isRegularFile(execJar), execJar + " is missing: run ./mvnw package first");

        // The build stage: the jar under its name in the stage, then the Dockerfile's own extraction command.
        Path build = Files.createDirectories(tmp.resolve("build"));
        Files.copy(execJar, build.resolve(copyJar.group(2)));
        Matcher extract = EXTRACT.matcher(dockerfile);
        assertThat(extract.find()).as("RUN java -Djarmode=tools ... extract").isTrue();
        assertThat(extract.group(2)).isEqualTo(copyJar.group(2));
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(Arrays.asList(extract.group(1).split("\\s+")));
        Process p = new ProcessBuilder(cmd).directory(build.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor(240, TimeUnit.SECONDS)).as("extraction finished").isTrue();
        assertThat(p.exitValue()).as("extraction exit status").isZero();

        // The runtime stage: every layer copied into WORKDIR, in the Dockerfile's order.
        String buildDir = firstWorkdir(dockerfile);
        Path app = Files.createDirectories(tmp.resolve("app"));
        List<String> layers = new ArrayList<>();
        for (Matcher copy = COPY_LAYER.matcher(dockerfile); copy.find(); ) {
            assertThat(copy.group(1)).as("COPY --from names the build stage").isEqualTo(stage.group(1));
            assertThat(copy.group(2)).startsWith(buildDir + "/");
            Path layer = build.resolve(copy.group(2).substring(buildDir.length() + 1));
            assertThat(layer).as("layer %s exists after extraction", copy.group(2)).isDirectory();
            copyTree(layer, app);
            layers.add(layer.getFileName().toString());
        }
        assertThat(layers).as("the layers, least to most often changed")
                .containsExactly("dependencies", "spring-boot-loader", "snapshot-dependencies", "application");

        String workdir = lastWorkdir(dockerfile);
        Matcher entrypoint = ENTRYPOINT.matcher(dockerfile);
        assertThat(entrypoint.find()).as("ENTRYPOINT runs java with the archive and $JAVA_OPTS").isTrue();
        Path jar = inImage(app, workdir, entrypoint.group(2));
        assertThat(jar).as("the ENTRYPOINT's jar in the layers").isRegularFile();
        try (JarFile jarFile = new JarFile(jar.toFile())) {
            Manifest manifest = jarFile.getManifest();
            String mainClass = manifest.getMainAttributes().getValue("Main-Class");
            assertThat(mainClass).as("Main-Class").isNotBlank().doesNotStartWith("org.springframework.boot.loader");
            assertThat(jarFile.getEntry(mainClass.replace('.', '/') + ".class")).as("main class in the jar").isNotNull();
            String classPath = manifest.getMainAttributes().getValue("Class-Path");
            assertThat(classPath).as("Class-Path").isNotBlank();
            for (String entry : classPath.trim().split("\\s+")) {
                assertThat(jar.getParent().resolve(entry)).as("Class-Path entry %s in the layers", entry).isRegularFile();
            }
        }
        Matcher training = TRAINING.matcher(dockerfile);
        assertThat(training.find()).as("a CDS training run").isTrue();
        assertThat(inImage(app, workdir, entrypoint.group(1))).as("the archive the ENTRYPOINT maps is the one trained")
                .isEqualTo(inImage(app, workdir, training.group(1)));
        assertThat(dockerfile).as("the training run exits before any lifecycle starts")
                .contains("-Dspring.context.exit=onRefresh -Dspring.kafka.bootstrap-servers=localhost:9092");
    }

    private static String firstWorkdir(String dockerfile) {
        Matcher m = WORKDIR.matcher(dockerfile);
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    private static String lastWorkdir(String dockerfile) {
        String last = null;
        for (Matcher m = WORKDIR.matcher(dockerfile); m.find(); ) {
            last = m.group(1);
        }
        return last;
    }

    /** A path as the container sees it (absolute, or relative to WORKDIR), in the local copy of WORKDIR. */
    private static Path inImage(Path app, String workdir, String path) {
        String relative = path.startsWith(workdir + "/") ? path.substring(workdir.length() + 1) : path;
        assertThat(relative).as("%s lies in WORKDIR %s", path, workdir).doesNotStartWith("/");
        return app.resolve(relative).normalize();
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> files = Files.walk(from)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                if (Files.isDirectory(f)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(f, target);
                }
            }
        }
    }
}
