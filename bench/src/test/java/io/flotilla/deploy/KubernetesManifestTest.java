package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The kustomize base {@code k8s/} agrees with ARCHITECTURE "Ports" and the keys the applications read. */
class KubernetesManifestTest {

    @Test
    void kustomizationListsEveryManifestAndNothingElse() throws IOException {
        Path k8s = Descriptors.repoRoot().resolve(Descriptors.K8S_BASE);
        List<String> onDisk;
        try (Stream<Path> files = Files.list(k8s)) {
            onDisk = files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".yaml") || n.endsWith(".yml"))
                    .filter(n -> !n.equals("kustomization.yaml"))
                    .sorted().collect(Collectors.toList());
        }
        assertThat(Descriptors.kustomizeResources()).containsExactlyInAnyOrderElementsOf(onDisk);
    }

    /** Deployments, ports, probes, Prometheus annotations, GPU limits, Services, planner RBAC and env keys. */
    @Test
    void manifestsMatchPortsTableProbesAndConfigurationKeys() {
        List<KubernetesChecker.Manifest> manifests = Descriptors.kubernetesManifests();

        List<String> problems = new KubernetesChecker(Descriptors.checker()).check(manifests);

        assertThat(problems).as("k8s/ problems").isEmpty();
    }

    /**
     * {@code kubectl kustomize} renders the base, the EPP overlay and the two-model overlay (a second model's
     * workers and planner on top of it); skipped where kubectl is not installed.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"k8s/", "k8s/overlays/pd/", "k8s/overlays/epp/",
            "k8s/overlays/monitoring/", "deploy/k8s-two-models/"})
    @Timeout(180)
    void kubectlKustomizeRenders(String dir) throws Exception {
        Assumptions.assumeTrue(onPath("kubectl"), "kubectl is absent from PATH; kustomize rendering not checked");
        Process kubectl = new ProcessBuilder("kubectl", "kustomize", dir)
                .directory(Descriptors.repoRoot().toFile())
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        String stderr = new String(kubectl.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(kubectl.waitFor(120, TimeUnit.SECONDS)).as("kubectl kustomize finished").isTrue();
        assertThat(kubectl.exitValue()).as("kubectl kustomize %s exit status; stderr: %s", dir, stderr).isZero();
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null && Stream.of(path.split(File.pathSeparator))
                .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, command)));
    }
}
