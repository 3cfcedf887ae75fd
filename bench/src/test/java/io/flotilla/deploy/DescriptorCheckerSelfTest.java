package io.flotilla.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The checks can fail: each checker, fed an in-memory copy of a real descriptor with known
 * mistakes, reports exactly those mistakes on top of whatever it reports for the real file.
 */
class DescriptorCheckerSelfTest {

    private final DescriptorChecker checker = Descriptors.checker();

    @Test
    void composeCopyWithWrongPortAndMisspelledKeyIsReported() {
        List<String> baseline = checker.checkCompose(Descriptors.compose());
        Map<String, Object> compose = Descriptors.compose();
        Map<String, Object> services = Descriptors.map(compose, "services");
        // worker-1 copied from worker-0 without bumping its gRPC port
        Descriptors.map(services.get("worker-1"), "environment").put("FLOTILLA_WORKER_GRPC_PORT", "7100");
        // a misspelled key Spring would silently ignore
        Descriptors.map(services.get("router"), "environment").put("FLOTILLA_ROUTER_INDEXR_ADDRESS", "kv-indexer:7002");

        List<String> problems = newProblems(checker.checkCompose(compose), baseline);

        assertThat(problems).containsExactlyInAnyOrder(
                "docker-compose.yml services.worker-1: env FLOTILLA_WORKER_GRPC_PORT is 7100, expected 7101",
                "docker-compose.yml services.router: env FLOTILLA_ROUTER_INDEXR_ADDRESS binds to no configuration key"
                        + " router-service reads",
                "docker-compose.yml services.router: env FLOTILLA_ROUTER_INDEXR_ADDRESS sets a port or address that"
                        + " FlotillaServices does not know");
    }

    @Test
    void composeCopyPublishingWrongPortIsReported() {
        List<String> baseline = checker.checkCompose(Descriptors.compose());
        Map<String, Object> compose = Descriptors.compose();
        Descriptors.list(Descriptors.map(compose, "services").get("kv-indexer"), "ports").set(0, "7020:7002");

        assertThat(newProblems(checker.checkCompose(compose), baseline)).singleElement().asString()
                .startsWith("docker-compose.yml services.kv-indexer: publishes (container=host) {7002=7020, 8083=8083}");
    }

    @Test
    void prometheusCopyScrapingDataPortIsReported() {
        Map<String, Object> compose = Descriptors.compose();
        List<String> baseline = checker.checkPrometheus(Descriptors.prometheus(), compose);
        Map<String, Object> prometheus = Descriptors.prometheus();
        Object routerJob = Descriptors.list(prometheus, "scrape_configs").stream()
                .filter(job -> "router".equals(Descriptors.text(job, "job_name"))).findFirst().orElseThrow();
        Descriptors.list(Descriptors.list(routerJob, "static_configs").get(0), "targets").set(0, "router:7001");

        assertThat(newProblems(checker.checkPrometheus(prometheus, compose), baseline)).containsExactlyInAnyOrder(
                "prometheus.yml: target router:7001 is not the management port 8082 of router",
                "prometheus.yml: no scrape target router:8082 for compose service router");
    }

    @Test
    void kubernetesCopyWithWrongProbePortAndNoGpuIsReported() {
        KubernetesChecker k8s = new KubernetesChecker(checker);
        List<String> baseline = k8s.check(Descriptors.kubernetesManifests());
        List<KubernetesChecker.Manifest> manifests = Descriptors.kubernetesManifests();
        Object gateway = container(manifests, "gateway");
        Descriptors.map(Descriptors.map(gateway, "readinessProbe"), "httpGet").put("port", "http");
        Object decode = container(manifests, "worker-decode");
        Descriptors.map(Descriptors.map(decode, "resources"), "limits").remove(KubernetesChecker.GPU_RESOURCE);

        assertThat(newProblems(k8s.check(manifests), baseline)).containsExactlyInAnyOrder(
                "k8s/base/gateway.yaml Deployment/gateway container gateway: readinessProbe port http is not the"
                        + " management port 8081",
                "k8s/base/worker-decode.yaml Deployment/worker-decode container worker-decode: no container of the pod limits"
                        + " nvidia.com/gpu to at least 1");
    }

    @Test
    void kubernetesCopyWhoseRolesLackTheLeaseAndTheWatchesIsReported() {
        KubernetesChecker k8s = new KubernetesChecker(checker);
        List<String> baseline = k8s.check(Descriptors.kubernetesManifests());
        List<KubernetesChecker.Manifest> manifests = Descriptors.kubernetesManifests();
        for (String role : List.of("flotilla-planner", "flotilla-router")) {
            KubernetesChecker.Manifest manifest = manifests.stream()
                    .filter(m -> "Role".equals(m.kind()) && role.equals(m.name())).findFirst().orElseThrow();
            Descriptors.list(manifest.doc(), "rules").forEach(rule -> {
                List<Object> verbs = Descriptors.list(rule, "verbs");
                verbs.remove("update");
                verbs.remove("watch");
            });
        }

        assertThat(newProblems(k8s.check(manifests), baseline)).containsExactlyInAnyOrder(
                "k8s: no Role bound to ServiceAccount flotilla-planner allows update on coordination.k8s.io leases",
                "k8s: no Role bound to ServiceAccount flotilla-router allows watch on core pods",
                "k8s: no Role bound to ServiceAccount flotilla-router allows watch on core configmaps");
    }

    private static Object container(List<KubernetesChecker.Manifest> manifests, String deployment) {
        KubernetesChecker.Manifest manifest = manifests.stream()
                .filter(m -> "Deployment".equals(m.kind()) && deployment.equals(m.name())).findFirst().orElseThrow();
        return Descriptors.list(Descriptors.map(Descriptors.map(manifest.doc(), "spec"), "template").get("spec"),
                "containers").get(0);
    }

    /** Problems in {@code after} that {@code before} did not have. */
    private static List<String> newProblems(List<String> after, List<String> before) {
        List<String> added = new ArrayList<>(after);
        added.removeAll(before);
        return added;
    }
}
