package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the configuration keys of each packaged application come from. */
class AppConfigMetadataTest {

    /** Own keys (configuration processor) and Spring Boot's keys (nested Boot jars) are both found. */
    @Test
    void packagedApplicationsReadOwnAndSpringBootKeys() {
        Path root = Descriptors.repoRoot();
        for (FlotillaServices.ServiceSpec spec : FlotillaServices.controlServices()) {
            ConfigKeys keys = AppConfigMetadata.forModule(root, spec.module());
            assertThat(keys.contains("server.port")).as(spec.module() + " server.port").isTrue();
            assertThat(keys.contains("management.server.port")).as(spec.module() + " management.server.port").isTrue();
            assertThat(keys.contains("spring.kafka.bootstrap-servers")).as(spec.module() + " kafka").isTrue();
        }
        assertThat(AppConfigMetadata.forModule(root, "router-service").contains("flotilla.router.indexer.address"))
                .isTrue();
        assertThat(AppConfigMetadata.forModule(root, "worker-agent").contains("flotilla.worker.transfer-port"))
                .isTrue();
    }

    /** Without the exec jar, the module's target/classes metadata and Spring Boot's jars on this classpath serve. */
    @Test
    void missingExecJarFallsBackToClassesAndBootJars(@TempDir Path root) throws IOException {
        Path metadata = root.resolve("router-service/target/classes/META-INF/spring-configuration-metadata.json");
        Files.createDirectories(metadata.getParent());
        Files.writeString(metadata, "{\"properties\": [{\"name\": \"flotilla.router.mode\", \"type\": \"java.lang.String\"}]}");

        ConfigKeys keys = AppConfigMetadata.forModule(root, "router-service");
        assertThat(keys.contains("flotilla.router.mode")).as("the module's own key").isTrue();
        assertThat(keys.contains("spring.main.banner-mode")).as("a key of the spring-boot jar").isTrue();
    }

    /** Without the exec jar and without the module's own metadata, loading says what to build. */
    @Test
    void missingExecJarAndMetadataFailsWithBuildHint(@TempDir Path root) {
        assertThatThrownBy(() -> AppConfigMetadata.forModule(root, "router-service"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("router-service/target/router-service-exec.jar is missing")
                .hasMessageContaining("./mvnw -DskipTests package");
    }
}
