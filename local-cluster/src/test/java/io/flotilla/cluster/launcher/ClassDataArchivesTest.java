package io.flotilla.cluster.launcher;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The archive's bookkeeping on a jar that is no Spring Boot jar (its extraction fails): a failure is reported once,
 * the service keeps its exec jar, and only a jar with other bytes is tried again. The archive that works is checked
 * by the whole-cluster test (every service JVM maps its archive).
 */
class ClassDataArchivesTest {

    private static final String MODULE = "router-service";

    @Test
    void aFailedArchiveIsReportedOnceAndTheServiceStartsFromItsExecJar(@TempDir Path root) throws Exception {
        Path jar = writeJar(root, "one");
        ClassDataArchives archives = new ClassDataArchives(root, ProcessControl.javaBinary());

        String first = prepare(archives);

        assertThat(first).contains("warning").contains(MODULE).contains("starts without class-data sharing");
        assertThat(archives.stampStatus(MODULE)).isEqualTo("failed");
        assertThat(archives.launchArgs(MODULE)).containsExactly("-jar", jar.toString());
        assertThat(prepare(archives)).as("not tried again for the same jar").isEmpty();
    }

    @Test
    void aJarRebuiltWithTheSameBytesKeepsItsStampAndOtherBytesInvalidateIt(@TempDir Path root) throws Exception {
        Path jar = writeJar(root, "one");
        ClassDataArchives archives = new ClassDataArchives(root, ProcessControl.javaBinary());
        prepare(archives);

        Files.setLastModifiedTime(jar, FileTime.fromMillis(Files.getLastModifiedTime(jar).toMillis() + 60_000));
        assertThat(archives.stampStatus(MODULE)).isEqualTo("failed");

        writeJar(root, "two");
        assertThat(archives.stampStatus(MODULE)).isNull();
        assertThat(prepare(archives)).contains("warning");
    }

    @Test
    void modulesWithoutAJarAreLeftAlone(@TempDir Path root) {
        ClassDataArchives archives = new ClassDataArchives(root, ProcessControl.javaBinary());

        assertThat(prepare(archives)).isEmpty();
        assertThat(archives.stampStatus(MODULE)).isNull();
        assertThat(Files.exists(root.resolve(MODULE).resolve("target").resolve("cds"))).isFalse();
    }

    private static String prepare(ClassDataArchives archives) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ServiceSpec spec = new ServiceSpec("router", MODULE, Map.of(), 0, List.of(), "64m");
        archives.prepare(List.of(spec), s -> List.of("-Xmx" + s.heap()), new PrintStream(out, true, StandardCharsets.UTF_8));
        return out.toString(StandardCharsets.UTF_8);
    }

    /** A plain jar (no Spring Boot launcher, so {@code -Djarmode=tools extract} fails) whose bytes depend on {@code content}. */
    private static Path writeJar(Path root, String content) throws Exception {
        Path jar = root.resolve(MODULE).resolve("target").resolve(MODULE + "-exec.jar");
        Files.createDirectories(jar.getParent());
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().putValue("Manifest-Version", "1.0");
        manifest.getMainAttributes().putValue("X-Content", content);
        try (JarOutputStream out = new JarOutputStream(Files.newOutputStream(jar), manifest)) {
            out.flush();
        }
        return jar;
    }
}
