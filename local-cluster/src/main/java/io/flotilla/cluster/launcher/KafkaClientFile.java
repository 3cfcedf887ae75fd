package io.flotilla.cluster.launcher;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;

/**
 * The {@code spring.kafka.*} client settings file of {@code up --kafka-config}: every service imports it,
 * so the security protocol, SASL login or TLS stores reach every Kafka client without a secret on any
 * command line.
 */
final class KafkaClientFile {

    private KafkaClientFile() {
    }

    /** The file, after checking that it is readable and holds only Kafka client settings. */
    static Path check(Path file) {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file)) {
            p.load(r);
        } catch (IOException e) {
            throw new LauncherException("--kafka-config " + file + ": cannot read it (" + e.getMessage() + ")");
        }
        for (String key : p.stringPropertyNames()) {
            if (!key.startsWith("spring.kafka.") && !key.startsWith("flotilla.kafka.")) {
                throw new LauncherException("--kafka-config " + file + ": '" + key + "' is not a Kafka client setting "
                        + "(spring.kafka.* or flotilla.kafka.*)");
            }
        }
        return file.toAbsolutePath().normalize();
    }

    /** Writes {@code settings} to {@code file}, readable by its owner only (it may hold a password). */
    static void write(Path file, Map<String, String> settings) throws IOException {
        Properties p = new Properties();
        p.putAll(settings);
        Files.createDirectories(file.toAbsolutePath().getParent());
        Files.deleteIfExists(file);
        Files.createFile(file, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        try (Writer w = Files.newBufferedWriter(file)) {
            p.store(w, "Kafka client settings for bin/flotilla up --kafka-config");
        }
    }
}
