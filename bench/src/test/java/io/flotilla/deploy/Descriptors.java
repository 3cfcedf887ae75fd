package io.flotilla.deploy;

import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Finds the repository root and reads the deployment descriptors under it as plain YAML trees
 * (maps, lists, strings, numbers, booleans), the shape {@link DescriptorChecker} and
 * {@link KubernetesChecker} take.
 */
final class Descriptors {

    private Descriptors() {
    }

    /**
     * The repository root: the nearest directory, from the working directory upwards, that holds
     * {@code docker-compose.yml} (surefire runs in {@code bench/}, so normally its parent).
     *
     * @throws IllegalStateException if no such directory exists
     */
    static Path repoRoot() {
        for (Path dir = Path.of("").toAbsolutePath(); dir != null; dir = dir.getParent()) {
            if (Files.isRegularFile(dir.resolve("docker-compose.yml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("no docker-compose.yml in " + Path.of("").toAbsolutePath()
                + " or any directory above it");
    }

    /** docker-compose.yml at the repository root. */
    static Map<String, Object> compose() {
        return loadYaml(repoRoot().resolve("docker-compose.yml"));
    }

    /** The Prometheus config docker-compose.yml mounts. */
    static Map<String, Object> prometheus() {
        return loadYaml(repoRoot().resolve("deploy/prometheus/prometheus.yml"));
    }

    /** The kustomize base (overlays under {@code k8s/overlays/} build on it; {@code k8s/} is the base alone). */
    static final String K8S_BASE = "k8s/base";

    /** The file names {@code k8s/base/kustomization.yaml} lists under {@code resources}. */
    static List<String> kustomizeResources() {
        List<String> names = new ArrayList<>();
        list(loadYaml(repoRoot().resolve(K8S_BASE + "/kustomization.yaml")), "resources").forEach(r -> names.add(String.valueOf(r)));
        return names;
    }

    /** Every document of every manifest the kustomization lists, in order. */
    static List<KubernetesChecker.Manifest> kubernetesManifests() {
        List<KubernetesChecker.Manifest> manifests = new ArrayList<>();
        for (String file : kustomizeResources()) {
            loadAllYaml(repoRoot().resolve(K8S_BASE).resolve(file))
                    .forEach(doc -> manifests.add(new KubernetesChecker.Manifest(file, doc)));
        }
        return manifests;
    }

    /** A checker that takes each module's keys from its packaged application ({@link AppConfigMetadata}). */
    static DescriptorChecker checker() {
        Path root = repoRoot();
        return new DescriptorChecker(module -> AppConfigMetadata.forModule(root, module));
    }

    /** The single YAML document in {@code file}, which must be a mapping. */
    static Map<String, Object> loadYaml(Path file) {
        List<Map<String, Object>> docs = loadAllYaml(file);
        if (docs.size() != 1) {
            throw new IllegalStateException(file + ": expected one YAML document, found " + docs.size());
        }
        return docs.get(0);
    }

    /** Every non-empty YAML document in {@code file} (multi-document files split at "---"). */
    @SuppressWarnings("unchecked")
    static List<Map<String, Object>> loadAllYaml(Path file) {
        List<Map<String, Object>> docs = new ArrayList<>();
        try (Reader reader = Files.newBufferedReader(file)) {
            for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(reader)) {
                if (doc == null) {
                    continue;
                }
                if (!(doc instanceof Map)) {
                    throw new IllegalStateException(file + ": a YAML document is not a mapping: " + doc);
                }
                docs.add((Map<String, Object>) doc);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return docs;
    }

    /** {@code node.get(key)} as a map; empty when absent. Fails when present with another type. */
    @SuppressWarnings("unchecked")
    static Map<String, Object> map(Object node, String key) {
        Object value = node instanceof Map ? ((Map<String, Object>) node).get(key) : null;
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof Map)) {
            throw new IllegalStateException("'" + key + "' is not a mapping: " + value);
        }
        return (Map<String, Object>) value;
    }

    /** {@code node.get(key)} as a list; empty when absent. Fails when present with another type. */
    @SuppressWarnings("unchecked")
    static List<Object> list(Object node, String key) {
        Object value = node instanceof Map ? ((Map<String, Object>) node).get(key) : null;
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List)) {
            throw new IllegalStateException("'" + key + "' is not a list: " + value);
        }
        return (List<Object>) value;
    }

    /** {@code node.get(key)} as text (numbers and booleans as YAML wrote them); null when absent. */
    static String text(Object node, String key) {
        Object value = node instanceof Map ? ((Map<?, ?>) node).get(key) : null;
        return value == null ? null : String.valueOf(value);
    }
}
