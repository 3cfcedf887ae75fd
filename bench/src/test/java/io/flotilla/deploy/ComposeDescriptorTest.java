package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.flotilla.deploy.FlotillaServices.ServiceSpec;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docker-compose.yml, the Prometheus config it mounts and the Dockerfiles it builds agree with ARCHITECTURE "Ports". */
class ComposeDescriptorTest {

    private static final Pattern EXPOSE = Pattern.compile("(?m)^EXPOSE\\s+(.+)$");

    @Test
    void composeNamesEveryService() {
        assertThat(Descriptors.map(Descriptors.compose(), "services"))
                .containsKeys(DescriptorChecker.COMPOSE_SERVICES.toArray(String[]::new));
    }

    /** Ports published, healthchecks, worker ids, and every env key bound to a key the application reads. */
    @Test
    void composeServicesMatchPortsTableAndConfigurationKeys() {
        List<String> problems = Descriptors.checker().checkCompose(Descriptors.compose());

        assertThat(problems).as("docker-compose.yml problems").isEmpty();
    }

    @Test
    void prometheusScrapesEveryComposeServiceOnItsManagementPort() {
        List<String> problems = Descriptors.checker().checkPrometheus(Descriptors.prometheus(), Descriptors.compose());

        assertThat(problems).as("deploy/prometheus/prometheus.yml problems").isEmpty();
    }

    /**
     * The images compose and Kubernetes run: each Dockerfile exposes exactly its service's ports and
     * passes {@code $JAVA_OPTS} to the JVM (which is why {@link DescriptorChecker#IMAGE_ENV} exempts it).
     */
    @Test
    void dockerfilesExposeServicePortsAndReadJavaOpts() throws IOException {
        List<String> problems = new ArrayList<>();
        for (ServiceSpec spec : List.of(FlotillaServices.gateway(), FlotillaServices.router(),
                FlotillaServices.kvIndexer(), FlotillaServices.planner(), FlotillaServices.worker(0))) {
            Path dockerfile = Descriptors.repoRoot().resolve(spec.module()).resolve("Dockerfile");
            String text = Files.readString(dockerfile);
            Set<Integer> exposed = new TreeSet<>();
            for (Matcher m = EXPOSE.matcher(text); m.find(); ) {
                for (String port : m.group(1).trim().split("\\s+")) {
                    exposed.add(Integer.valueOf(port.replaceFirst("/(tcp|udp)$", "")));
                }
            }
            if (!exposed.equals(new TreeSet<>(spec.ports().values()))) {
                problems.add(dockerfile + ": EXPOSE " + exposed + ", expected " + new TreeSet<>(spec.ports().values()));
            }
            if (!text.contains("$JAVA_OPTS") || !text.contains("target/" + spec.module() + "-exec.jar")) {
                problems.add(dockerfile + ": does not run target/" + spec.module() + "-exec.jar with $JAVA_OPTS");
            }
        }
        assertThat(problems).as("Dockerfile problems").isEmpty();
    }

    @Test
    void composeWorkersAreAggregatedSimulatedWorkersOfOneModel() {
        Map<String, Object> services = Descriptors.map(Descriptors.compose(), "services");
        for (int n = 0; n < 2; n++) {
            Map<String, Object> env = Descriptors.map(services.get(FlotillaServices.worker(n).name()), "environment");
            assertThat(env).containsEntry("FLOTILLA_WORKER_ROLE", "aggregated")
                    .containsEntry("FLOTILLA_WORKER_ENGINE", "sim")
                    .containsEntry("FLOTILLA_WORKER_MODEL",
                            Descriptors.map(services.get("gateway"), "environment").get("FLOTILLA_GATEWAY_DEFAULT_MODEL"));
        }
    }
}
