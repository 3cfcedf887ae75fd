package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.w3c.dom.Element;

/**
 * Every layout an operator applies, as {@code kubectl kustomize} renders it (skipped where kubectl is absent):
 * the whole {@link KubernetesChecker} on the rendered manifests (Deployments, ports, probes on the health
 * groups, Services, RBAC, a PodDisruptionBudget per workload and every environment variable a real
 * configuration key of its service), every image tagged, Flotilla's with the project version; with the
 * monitoring component, a ServiceMonitor scraping each workload's management port. docker-compose.yml's
 * Flotilla images carry the same version.
 */
class KubernetesOverlaysTest {

    private static final Pattern COMPOSE_IMAGE = Pattern.compile("(?m)^\\s+image: (\\S+)$");

    @ParameterizedTest
    @ValueSource(strings = {"k8s/", "k8s/overlays/pd/", "k8s/overlays/epp/", "k8s/overlays/monitoring/",
            "k8s/overlays/multinode/", "deploy/k8s-two-models/"})
    @Timeout(180)
    void renderedOverlayPassesTheChecker(String dir, @TempDir Path tmp) throws Exception {
        List<KubernetesChecker.Manifest> manifests = render(dir, tmp);

        List<String> problems = new ArrayList<>(new KubernetesChecker(Descriptors.checker()).check(manifests));
        problems.addAll(KubernetesChecker.checkImageTags(manifests, projectVersion()));
        if (dir.contains("monitoring")) {
            problems.addAll(KubernetesChecker.checkServiceMonitors(manifests));
        }

        assertThat(problems).as("problems in the render of %s", dir).isEmpty();
    }

    @Test
    @Timeout(180)
    void pdOverlayRunsPrefillAndDecodeInsteadOfAggregated(@TempDir Path tmp) throws Exception {
        List<KubernetesChecker.Manifest> manifests = render("k8s/overlays/pd/", tmp);
        assertThat(replicas(manifests, "worker-aggregated")).isEqualTo("0");
        assertThat(replicas(manifests, "worker-prefill")).isEqualTo("1");
        assertThat(replicas(manifests, "worker-decode")).isEqualTo("1");
    }

    /**
     * The multinode overlay's aggregated instances are LeaderWorkerSet groups (the Deployment is gone, so the planner
     * scales the groups), and the checker looks inside a group's templates: a leader without the worker agent is
     * reported.
     */
    @Test
    @Timeout(180)
    void multinodeOverlayRunsAggregatedInstancesAsLeaderWorkerSetGroups(@TempDir Path tmp) throws Exception {
        List<KubernetesChecker.Manifest> manifests = render("k8s/overlays/multinode/", tmp);
        assertThat(manifests).noneMatch(m -> "Deployment".equals(m.kind()) && "worker-aggregated".equals(m.name()));
        KubernetesChecker.Manifest set = manifests.stream().filter(m -> KubernetesChecker.LWS.equals(m.kind())).findFirst()
                .orElseThrow();
        assertThat(Descriptors.map(set.doc(), "metadata").get("labels")).asInstanceOf(
                org.assertj.core.api.InstanceOfAssertFactories.MAP).containsEntry("flotilla.io/component", "worker")
                .containsEntry("flotilla.io/role", "aggregated");
        Map<String, Object> template = Descriptors.map(Descriptors.map(set.doc(), "spec"), "leaderWorkerTemplate");
        assertThat(template.get("size")).isEqualTo(2);
        assertThat(template.get("restartPolicy")).isEqualTo("RecreateGroupOnPodRestart");

        Map<String, Object> leaderless = new java.util.HashMap<>(set.doc());
        leaderless.put("spec", Map.of("leaderWorkerTemplate", Map.of("size", 2, "leaderTemplate",
                Descriptors.map(template, "workerTemplate"))));
        List<KubernetesChecker.Manifest> broken = new ArrayList<>(manifests);
        broken.replaceAll(m -> m == set ? new KubernetesChecker.Manifest(m.file(), leaderless) : m);
        assertThat(new KubernetesChecker(Descriptors.checker()).check(broken))
                .anyMatch(p -> p.contains("LeaderWorkerSet/worker-aggregated: no container runs a flotilla/worker-agent image"));
    }

    @Test
    void composeImagesCarryTheProjectVersion() throws Exception {
        String compose = Files.readString(Descriptors.repoRoot().resolve("docker-compose.yml"));
        List<String> problems = new ArrayList<>();
        int flotilla = 0;
        for (Matcher m = COMPOSE_IMAGE.matcher(compose); m.find(); ) {
            String image = m.group(1);
            String repository = DescriptorChecker.imageRepository(image);
            if (repository.equals(image) || image.endsWith(":latest")) {
                problems.add(image + " has no version tag");
            } else if (repository.startsWith("flotilla/")) {
                flotilla++;
                if (!image.equals(repository + ":" + projectVersion())) {
                    problems.add(image + " is not tagged " + projectVersion());
                }
            }
        }
        assertThat(flotilla).as("Flotilla images in docker-compose.yml").isPositive();
        assertThat(problems).isEmpty();
    }

    /** A render with {@code :latest}, an untagged image, or no ServiceMonitor is reported: the checks can fail. */
    @Test
    @Timeout(180)
    void theChecksReportWhatTheyLookFor(@TempDir Path tmp) throws Exception {
        List<KubernetesChecker.Manifest> manifests = render("k8s/", tmp);
        assertThat(KubernetesChecker.checkImageTags(manifests, "9.9.9")).isNotEmpty()
                .allMatch(p -> p.contains("not tagged with the project version 9.9.9"));
        assertThat(KubernetesChecker.checkServiceMonitors(manifests)).as("the base has no ServiceMonitor")
                .anyMatch(p -> p.contains("Deployment/gateway: no ServiceMonitor"))
                .anyMatch(p -> p.contains("Deployment/worker-aggregated: no ServiceMonitor"));
        List<KubernetesChecker.Manifest> raw = Descriptors.kubernetesManifests();
        assertThat(KubernetesChecker.checkImageTags(raw, projectVersion())).as("unrendered: tags come from kustomize")
                .anyMatch(p -> p.contains("image flotilla/router-service has no version tag"));
        List<KubernetesChecker.Manifest> withoutBudgets = manifests.stream()
                .filter(m -> !"PodDisruptionBudget".equals(m.kind())).toList();
        assertThat(new KubernetesChecker(Descriptors.checker()).check(withoutBudgets))
                .anyMatch(p -> p.contains("Deployment/planner: no PodDisruptionBudget selects its pods"));
    }

    /** The project version: pom.xml's {@code /project/version}. */
    static String projectVersion() throws Exception {
        Element project = DocumentBuilderFactory.newInstance().newDocumentBuilder()
                .parse(Descriptors.repoRoot().resolve("pom.xml").toFile()).getDocumentElement();
        for (var n = project.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals("version")) {
                return e.getTextContent().trim();
            }
        }
        throw new IllegalStateException("pom.xml has no project version");
    }

    private static String replicas(List<KubernetesChecker.Manifest> manifests, String deployment) {
        return manifests.stream().filter(m -> "Deployment".equals(m.kind()) && deployment.equals(m.name()))
                .map(m -> Descriptors.text(Descriptors.map(m.doc(), "spec"), "replicas")).findFirst().orElseThrow();
    }

    private static List<KubernetesChecker.Manifest> render(String dir, Path tmp) throws Exception {
        Assumptions.assumeTrue(onPath("kubectl"), "kubectl is absent from PATH; kustomize rendering not checked");
        Path rendered = tmp.resolve("rendered.yaml");
        Process kubectl = new ProcessBuilder("kubectl", "kustomize", dir)
                .directory(Descriptors.repoRoot().toFile()).redirectOutput(rendered.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(kubectl.waitFor(120, TimeUnit.SECONDS)).as("kubectl kustomize finished").isTrue();
        assertThat(kubectl.exitValue()).as("kubectl kustomize %s exit status", dir).isZero();
        List<KubernetesChecker.Manifest> manifests = new ArrayList<>();
        Descriptors.loadAllYaml(rendered).forEach(doc -> manifests.add(new KubernetesChecker.Manifest(dir + " (rendered)", doc)));
        return manifests;
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null && Stream.of(path.split(File.pathSeparator))
                .anyMatch(d -> !d.isEmpty() && Files.isExecutable(Path.of(d, command)));
    }
}
