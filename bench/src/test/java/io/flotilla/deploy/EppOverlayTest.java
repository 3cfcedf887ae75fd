package io.flotilla.deploy;

import static io.flotilla.deploy.Descriptors.list;
import static io.flotilla.deploy.Descriptors.map;
import static io.flotilla.deploy.Descriptors.text;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kubectl kustomize k8s/overlays/epp} renders an InferencePool whose endpoint picker is the router:
 * the picker Service reaches the router pods' ext_proc port, the router runs with EPP mode on that port
 * and answers the pool's target port, the pool selects pods that serve on it, the objectives' priorities
 * are the ones the router is configured with, and every router setting the overlay adds is a real key.
 */
class EppOverlayTest {

    @Test
    @Timeout(180)
    void theRenderedPoolsPickerIsTheRouter(@TempDir Path tmp) throws Exception {
        Assumptions.assumeTrue(onPath("kubectl"), "kubectl is absent from PATH; kustomize rendering not checked");
        Path rendered = tmp.resolve("epp.yaml");
        Process kubectl = new ProcessBuilder("kubectl", "kustomize", "k8s/overlays/epp")
                .directory(Descriptors.repoRoot().toFile()).redirectOutput(rendered.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(kubectl.waitFor(120, TimeUnit.SECONDS)).isTrue();
        assertThat(kubectl.exitValue()).isZero();
        List<Map<String, Object>> docs = Descriptors.loadAllYaml(rendered);

        Map<String, Object> pool = one(docs, "InferencePool", "flotilla");
        assertThat(text(pool, "apiVersion")).isEqualTo("inference.networking.k8s.io/v1");
        Map<String, Object> picker = map(map(pool, "spec"), "endpointPickerRef");
        assertThat(text(picker, "failureMode")).isEqualTo("FailClose");
        String targetPort = text(list(map(pool, "spec"), "targetPorts").get(0), "number");

        Map<String, Object> service = one(docs, "Service", text(picker, "name"));
        Map<String, Object> servicePort = list(map(service, "spec"), "ports").stream()
                .map(p -> (Map<String, Object>) cast(p)).filter(p -> text(map(picker, "port"), "number").equals(text(p, "port")))
                .findFirst().orElseThrow(() -> new AssertionError("the picker Service has no port " + map(picker, "port")));

        Map<String, Object> router = one(docs, "Deployment", "router");
        Map<String, Object> routerPod = map(map(router, "spec"), "template");
        assertThat(map(routerPod, "metadata").get("labels")).as("the picker Service selects the router pods")
                .asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                .containsAllEntriesOf(map(map(service, "spec"), "selector"));
        Map<String, Object> container = container(routerPod, "router");
        Map<String, String> env = env(container);
        assertThat(list(container, "ports")).as("the Service's target port is the router's ext_proc port")
                .anyMatch(p -> text(servicePort, "targetPort").equals(text(p, "name"))
                        && env.get("FLOTILLA_ROUTER_EPP_PORT").equals(text(p, "containerPort")));
        assertThat(env).containsEntry("FLOTILLA_ROUTER_EPP_ENABLED", "true")
                .containsEntry("FLOTILLA_ROUTER_EPP_TARGET_PORT", targetPort)
                .containsEntry("FLOTILLA_ROUTER_EPP_FAILURE_MODE", text(picker, "failureMode"));
        ConfigKeys keys = AppConfigMetadata.forModule(Descriptors.repoRoot(), "router-service");
        assertThat(env.keySet().stream().filter(k -> k.startsWith("FLOTILLA_")))
                .as("router settings the overlay sets are keys the router reads").allMatch(keys::bindsEnv);

        for (Map<String, Object> objective : all(docs, "InferenceObjective")) {
            String name = text(map(objective, "metadata"), "name");
            assertThat(env.get("FLOTILLA_ROUTER_EPP_OBJECTIVES_" + name.toUpperCase()))
                    .as("the router's priority of objective %s", name).isEqualTo(text(map(objective, "spec"), "priority"));
        }

        Map<String, Object> selector = map(map(map(pool, "spec"), "selector"), "matchLabels");
        Map<String, Object> workers = all(docs, "Deployment").stream()
                .filter(d -> map(map(map(map(d, "spec"), "template"), "metadata"), "labels").entrySet()
                        .containsAll(selector.entrySet()))
                .findFirst().orElseThrow(() -> new AssertionError("no Deployment's pods match the pool's selector"));
        assertThat(list(map(map(map(workers, "spec"), "template"), "spec"), "containers"))
                .as("a container of the pool's pods serves on the target port")
                .anyMatch(c -> list(c, "ports").stream().anyMatch(p -> targetPort.equals(text(p, "containerPort"))));
    }

    private static Map<String, Object> container(Map<String, Object> pod, String name) {
        return list(map(pod, "spec"), "containers").stream().map(c -> (Map<String, Object>) cast(c))
                .filter(c -> name.equals(text(c, "name"))).findFirst().orElseThrow();
    }

    private static Map<String, String> env(Map<String, Object> container) {
        Map<String, String> env = new HashMap<>();
        list(container, "env").forEach(e -> env.put(text(e, "name"), text(e, "value")));
        return env;
    }

    private static List<Map<String, Object>> all(List<Map<String, Object>> docs, String kind) {
        return docs.stream().filter(d -> kind.equals(text(d, "kind"))).toList();
    }

    private static Map<String, Object> one(List<Map<String, Object>> docs, String kind, String name) {
        List<Map<String, Object>> found = all(docs, kind).stream().filter(d -> name.equals(text(map(d, "metadata"), "name"))).toList();
        assertThat(found).as("%s %s in the render", kind, name).hasSize(1);
        return found.get(0);
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> cast(Object o) {
        return (Map<String, Object>) o;
    }

    private static boolean onPath(String command) {
        String path = System.getenv("PATH");
        return path != null && Stream.of(path.split(File.pathSeparator))
                .anyMatch(dir -> !dir.isEmpty() && Files.isExecutable(Path.of(dir, command)));
    }
}
