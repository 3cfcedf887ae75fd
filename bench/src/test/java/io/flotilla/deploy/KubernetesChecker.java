package io.flotilla.deploy;

import static io.flotilla.deploy.Descriptors.list;
import static io.flotilla.deploy.Descriptors.map;
import static io.flotilla.deploy.Descriptors.text;

import io.flotilla.deploy.FlotillaServices.ServiceSpec;
import io.flotilla.protocol.Ports;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Checks the manifests of the kustomize base {@code k8s/} against {@link FlotillaServices}: a
 * Deployment per control service and per worker role, their container ports, health probes,
 * Prometheus annotations, GPU limits and environment (through {@link DescriptorChecker}), the
 * Services in front of them, Kafka, the planner's right to scale Deployments and hold its Lease, and the
 * router's to watch pods and ConfigMaps. Like
 * {@link DescriptorChecker} it returns problems, one line each, and never throws on a wrong manifest.
 */
final class KubernetesChecker {

    /** Worker Deployments are {@code worker-<role>}; each pod is one worker with worker 0's ports. */
    static final List<String> WORKER_ROLES = List.of("aggregated", "prefill", "decode");
    static final String GPU_RESOURCE = "nvidia.com/gpu";
    /** A multi-pod worker: a group per instance ({@code leaderworkerset.x-k8s.io}). */
    static final String LWS = "LeaderWorkerSet";

    /** One YAML document and the file it came from. */
    record Manifest(String file, Map<String, Object> doc) {
        String kind() {
            return text(doc, "kind");
        }

        String name() {
            return text(map(doc, "metadata"), "name");
        }

        String where() {
            return (file.contains("/") ? file : Descriptors.K8S_BASE + "/" + file) + " " + kind() + "/" + name();
        }
    }

    private final DescriptorChecker envChecker;

    KubernetesChecker(DescriptorChecker envChecker) {
        this.envChecker = envChecker;
    }

    /** Problems in all manifests of the base, taken together. */
    List<String> check(List<Manifest> manifests) {
        List<String> problems = new ArrayList<>();
        Map<String, ServiceSpec> expected = new LinkedHashMap<>();
        FlotillaServices.controlServices().forEach(spec -> expected.put(spec.name(), spec));
        expected.put("gateway", FlotillaServices.gateway(FlotillaServices.KUBERNETES_ROUTER_ADDRESS));
        WORKER_ROLES.forEach(role -> expected.put("worker-" + role, FlotillaServices.worker(0)));
        for (String name : expected.keySet()) {
            boolean groups = name.startsWith("worker-") && find(manifests, LWS, name).isPresent();
            if (find(manifests, "Deployment", name).isEmpty() && !groups) {
                problems.add("k8s: no Deployment " + name);
            }
        }
        for (Manifest m : workloads(manifests)) {
            String service = serviceOf(expected.keySet(), m.name());
            ServiceSpec spec = service == null ? null : expected.get(service);
            if ("router".equals(service) && eppEnabled(m)) {
                spec = FlotillaServices.routerEpp();
            }
            String role = service != null && service.startsWith("worker-") ? service.substring("worker-".length()) : null;
            checkWorkload(m, spec, role, problems);
            if (spec != null) {
                checkDisruptionBudget(manifests, m, problems);
            }
        }
        for (ServiceSpec spec : FlotillaServices.controlServices()) {
            checkService(manifests, spec.name(), Set.copyOf(spec.ports().values()), true, problems);
        }
        // The gateway reaches every router replica through the headless Service (gRPC only).
        checkService(manifests, "router-headless", Set.of(Ports.ROUTER_GRPC), true, problems);
        // Kafka's Service also carries the KRaft controller port, which no Flotilla service uses.
        checkService(manifests, "kafka", Set.of(Ports.KAFKA), false, problems);
        checkAccounts(manifests, problems);
        return problems;
    }

    /**
     * The Deployments and StatefulSets, and each LeaderWorkerSet as two workloads: its leader template (the pod that
     * is the group's worker, named as the set) and its worker template (the other ranks, {@code <set> (ranks)}, which
     * run no Flotilla image).
     */
    static List<Manifest> workloads(List<Manifest> manifests) {
        List<Manifest> workloads = new ArrayList<>();
        for (Manifest m : manifests) {
            if ("Deployment".equals(m.kind()) || "StatefulSet".equals(m.kind())) {
                workloads.add(m);
            } else if (LWS.equals(m.kind())) {
                Map<String, Object> template = map(map(m.doc(), "spec"), "leaderWorkerTemplate");
                workloads.add(groupTemplate(m, m.name(), template.get("leaderTemplate")));
                if (template.get("workerTemplate") != null) {
                    workloads.add(groupTemplate(m, m.name() + " (ranks)", template.get("workerTemplate")));
                }
            }
        }
        return workloads;
    }

    private static Manifest groupTemplate(Manifest set, String name, Object podTemplate) {
        return new Manifest(set.file(), Map.of("kind", LWS, "metadata", Map.of("name", name),
                "spec", Map.of("template", podTemplate == null ? Map.of() : podTemplate)));
    }

    /** One workload; {@code spec} null means it must run only third-party images (e.g. Kafka). */
    private void checkWorkload(Manifest m, ServiceSpec spec, String workerRole, List<String> problems) {
        Map<String, Object> template = map(m.doc().get("spec"), "template");
        List<Object> containers = list(template.get("spec"), "containers");
        if (spec != null && containers.stream().noneMatch(c -> String.valueOf(text(c, "image")).startsWith("flotilla/"))) {
            problems.add(m.where() + ": no container runs a flotilla/" + spec.module() + " image");
        }
        for (Object container : containers) {
            String where = m.where() + " container " + text(container, "name");
            String image = text(container, "image");
            Map<String, String> env = env(container, where, problems);
            if (image == null || !image.startsWith("flotilla/")) {
                DescriptorChecker.checkForeignEnv(where, image, env, problems);
                continue;
            }
            if (spec == null) {
                problems.add(where + ": Flotilla workload with no entry in FlotillaServices (unknown ports)");
                continue;
            }
            if (!image.matches("flotilla/" + spec.module() + "(:.+)?")) {
                problems.add(where + ": image is " + image + ", expected flotilla/" + spec.module());
            }
            Map<String, Integer> ports = containerPorts(container);
            if (!ports.equals(spec.ports())) {
                problems.add(where + ": container ports " + ports + ", expected " + spec.ports());
            }
            checkProbe(where, container, "readinessProbe", DescriptorChecker.READINESS_PATH, ports, spec, problems);
            checkProbe(where, container, "livenessProbe", DescriptorChecker.LIVENESS_PATH, ports, spec, problems);
            if (map(container, "startupProbe").containsKey("httpGet")) {
                checkProbe(where, container, "startupProbe", DescriptorChecker.LIVENESS_PATH, ports, spec, problems);
            }
            Map<String, Object> annotations = map(template.get("metadata"), "annotations");
            expectText(where, "annotation prometheus.io/scrape", "true", annotations.get("prometheus.io/scrape"), problems);
            expectText(where, "annotation prometheus.io/port", String.valueOf(spec.managementPort()),
                    annotations.get("prometheus.io/port"), problems);
            expectText(where, "annotation prometheus.io/path", DescriptorChecker.METRICS_PATH,
                    annotations.get("prometheus.io/path"), problems);
            if (workerRole != null) {
                expectText(where, "env FLOTILLA_WORKER_ROLE", workerRole, env.get("FLOTILLA_WORKER_ROLE"), problems);
                expectText(where, "label flotilla.io/role", workerRole,
                        map(template.get("metadata"), "labels").get("flotilla.io/role"), problems);
                // The GPU belongs to the engine: the agent's own container, or an engine container beside it.
                if (containers.stream().noneMatch(c -> String.valueOf(map(map(c, "resources"), "limits").get(GPU_RESOURCE))
                        .matches("[1-9]\\d*"))) {
                    problems.add(where + ": no container of the pod limits " + GPU_RESOURCE + " to at least 1");
                }
            }
            envChecker.checkFlotillaEnv(where, spec, env, problems);
        }
    }

    /**
     * The service a workload deploys: its name, or a further instance of one ({@code worker-aggregated-model-b},
     * {@code planner-model-b}: the longest service name followed by {@code -}); null if none.
     */
    private static String serviceOf(Set<String> services, String workload) {
        if (services.contains(workload)) {
            return workload;
        }
        return services.stream().filter(s -> workload.startsWith(s + "-"))
                .max(java.util.Comparator.comparingInt(String::length)).orElse(null);
    }

    private static boolean eppEnabled(Manifest workload) {
        return list(map(map(workload.doc(), "spec"), "template").get("spec"), "containers").stream()
                .flatMap(c -> list(c, "env").stream())
                .anyMatch(e -> "FLOTILLA_ROUTER_EPP_ENABLED".equals(text(e, "name")) && "true".equals(text(e, "value")));
    }

    /** A PodDisruptionBudget must select the workload's pods, so a drain cannot take them all at once. */
    private static void checkDisruptionBudget(List<Manifest> manifests, Manifest workload, List<String> problems) {
        Map<String, Object> labels = map(map(map(workload.doc(), "spec"), "template"), "metadata");
        boolean covered = manifests.stream().filter(m -> "PodDisruptionBudget".equals(m.kind()))
                .map(m -> map(map(m.doc(), "spec"), "selector"))
                .map(selector -> map(selector, "matchLabels"))
                .anyMatch(match -> !match.isEmpty() && map(labels, "labels").entrySet().containsAll(match.entrySet()));
        if (!covered) {
            problems.add(workload.where() + ": no PodDisruptionBudget selects its pods");
        }
    }

    /**
     * Every container image names a tag other than {@code latest} (kustomize's {@code images:} sets it in a render,
     * so this is for rendered manifests), and every Flotilla image's tag is {@code version}.
     */
    static List<String> checkImageTags(List<Manifest> manifests, String version) {
        List<String> problems = new ArrayList<>();
        for (Manifest m : workloads(manifests)) {
            Map<String, Object> pod = map(map(m.doc(), "spec"), "template");
            List<Object> containers = new ArrayList<>(list(pod.get("spec"), "containers"));
            containers.addAll(list(pod.get("spec"), "initContainers"));
            for (Object container : containers) {
                String image = String.valueOf(text(container, "image"));
                String repository = DescriptorChecker.imageRepository(image);
                String tag = repository.equals(image) ? null : image.substring(repository.length() + 1);
                String where = m.where() + " container " + text(container, "name");
                if (tag == null || tag.equals("latest")) {
                    problems.add(where + ": image " + image + " has no version tag");
                } else if (repository.startsWith("flotilla/") && !tag.equals(version)) {
                    problems.add(where + ": image " + image + " is not tagged with the project version " + version);
                }
            }
        }
        return problems;
    }

    /**
     * Each Flotilla workload's pods are behind a Service that a ServiceMonitor selects, scraping
     * {@code /actuator/prometheus} on the Service port that targets the pods' management port.
     */
    static List<String> checkServiceMonitors(List<Manifest> manifests) {
        List<String> problems = new ArrayList<>();
        Map<String, ServiceSpec> byWorkload = new LinkedHashMap<>();
        FlotillaServices.controlServices().forEach(spec -> byWorkload.put(spec.name(), spec));
        WORKER_ROLES.forEach(role -> byWorkload.put("worker-" + role, FlotillaServices.worker(0)));
        for (Manifest workload : manifests) {
            String service = "Deployment".equals(workload.kind()) ? serviceOf(byWorkload.keySet(), workload.name()) : null;
            if (service == null) {
                continue;
            }
            int managementPort = byWorkload.get(service).managementPort();
            Map<String, Object> podLabels = map(map(map(workload.doc(), "spec"), "template").get("metadata"), "labels");
            Map<String, Integer> containerPorts = new LinkedHashMap<>();
            list(map(map(workload.doc(), "spec"), "template").get("spec"), "containers")
                    .forEach(c -> containerPorts.putAll(containerPorts(c)));
            boolean scraped = false;
            for (Manifest svc : manifests) {
                Map<String, Object> selector = map(svc.doc().get("spec"), "selector");
                if (!"Service".equals(svc.kind()) || selector.isEmpty() || !podLabels.entrySet().containsAll(selector.entrySet())) {
                    continue;
                }
                Map<String, Object> serviceLabels = map(svc.doc().get("metadata"), "labels");
                for (Manifest monitor : manifests) {
                    if (!"ServiceMonitor".equals(monitor.kind())
                            || !"monitoring.coreos.com/v1".equals(text(monitor.doc(), "apiVersion"))
                            || !serviceLabels.entrySet().containsAll(
                                    map(map(monitor.doc().get("spec"), "selector"), "matchLabels").entrySet())) {
                        continue;
                    }
                    for (Object endpoint : list(monitor.doc().get("spec"), "endpoints")) {
                        for (Object port : list(svc.doc().get("spec"), "ports")) {
                            Object target = ((Map<?, ?>) port).get("targetPort");
                            Integer targetPort = resolve(target == null ? ((Map<?, ?>) port).get("port") : target, containerPorts);
                            scraped |= String.valueOf(text(endpoint, "port")).equals(text(port, "name"))
                                    && DescriptorChecker.METRICS_PATH.equals(text(endpoint, "path"))
                                    && targetPort != null && targetPort == managementPort;
                        }
                    }
                }
            }
            if (!scraped) {
                problems.add(workload.where() + ": no ServiceMonitor scrapes " + DescriptorChecker.METRICS_PATH
                        + " on its management port " + managementPort);
            }
        }
        return problems;
    }

    private static void checkProbe(String where, Object container, String probe, String path,
                                   Map<String, Integer> ports, ServiceSpec spec, List<String> problems) {
        Map<String, Object> httpGet = map(map(container, probe), "httpGet");
        if (httpGet.isEmpty()) {
            problems.add(where + ": no " + probe + ".httpGet");
            return;
        }
        expectText(where, probe + " path", path, httpGet.get("path"), problems);
        Integer port = resolve(httpGet.get("port"), ports);
        if (port == null || port != spec.managementPort()) {
            problems.add(where + ": " + probe + " port " + httpGet.get("port") + " is not the management port "
                    + spec.managementPort());
        }
    }

    /**
     * The Service {@code name}: {@code ports} (exactly them when {@code exact}, else at least them), each
     * targeting the container port of the same number in the pods it selects.
     */
    private static void checkService(List<Manifest> manifests, String name, Set<Integer> ports, boolean exact,
                                     List<String> problems) {
        Optional<Manifest> service = find(manifests, "Service", name);
        if (service.isEmpty()) {
            problems.add("k8s: no Service " + name);
            return;
        }
        Map<String, Object> selector = map(service.get().doc().get("spec"), "selector");
        Optional<Manifest> workload = manifests.stream()
                .filter(m -> "Deployment".equals(m.kind()) || "StatefulSet".equals(m.kind()))
                .filter(m -> map(map(m.doc().get("spec"), "template").get("metadata"), "labels").entrySet()
                        .containsAll(selector.entrySet()))
                .findFirst();
        if (selector.isEmpty() || workload.isEmpty()) {
            problems.add(service.get().where() + ": selector " + selector + " matches no Deployment or StatefulSet");
            return;
        }
        Map<String, Integer> containerPorts = new LinkedHashMap<>();
        list(map(map(workload.get().doc(), "spec"), "template").get("spec"), "containers")
                .forEach(c -> containerPorts.putAll(containerPorts(c)));
        Set<Integer> servicePorts = new TreeSet<>();
        for (Object port : list(service.get().doc().get("spec"), "ports")) {
            Integer number = resolve(((Map<?, ?>) port).get("port"), Map.of());
            Object targetPort = ((Map<?, ?>) port).get("targetPort");
            Integer target = targetPort == null ? number : resolve(targetPort, containerPorts);
            servicePorts.add(number);
            if (target == null || !target.equals(number)) {
                problems.add(service.get().where() + ": port " + number + " targets " + targetPort
                        + ", which is container port " + target + " of " + workload.get().name());
            }
        }
        if (exact ? !servicePorts.equals(new TreeSet<>(ports)) : !servicePorts.containsAll(ports)) {
            problems.add(service.get().where() + ": ports " + servicePorts + ", expected " + (exact ? "" : "at least ")
                    + new TreeSet<>(ports));
        }
    }

    /**
     * What each service's account must be allowed: the planner patches deployments/scale and, electing its leader,
     * creates and updates leases, and scales leaderworkersets and deletes a partial group's pods; the router watches
     * pods and configmaps; the gateway watches configmaps.
     */
    private static void checkAccounts(List<Manifest> manifests, List<String> problems) {
        checkRbac(manifests, FlotillaServices.planner().name(), "apps", "deployments/scale", "patch", problems);
        checkRbac(manifests, FlotillaServices.planner().name(), "leaderworkerset.x-k8s.io", "leaderworkersets", "patch", problems);
        checkRbac(manifests, FlotillaServices.planner().name(), "", "pods", "delete", problems);
        for (String verb : List.of("get", "create", "update")) {
            checkRbac(manifests, FlotillaServices.planner().name(), "coordination.k8s.io", "leases", verb, problems);
        }
        for (String resource : List.of("pods", "configmaps")) {
            for (String verb : List.of("list", "watch")) {
                checkRbac(manifests, FlotillaServices.router().name(), "", resource, verb, problems);
            }
        }
        for (String verb : List.of("list", "watch")) {
            checkRbac(manifests, "gateway", "", "configmaps", verb, problems);
        }
    }

    /** The Deployment {@code deployment}'s service account must be bound to a Role that allows {@code verb} on the resource. */
    private static void checkRbac(List<Manifest> manifests, String deployment, String apiGroup, String resource, String verb,
                                  List<String> problems) {
        Optional<Manifest> workload = find(manifests, "Deployment", deployment);
        String account = workload.map(p -> text(map(map(p.doc().get("spec"), "template"), "spec"), "serviceAccountName"))
                .orElse(null);
        if (account == null) {
            problems.add("k8s: the " + deployment + " Deployment names no serviceAccountName");
            return;
        }
        boolean allowed = manifests.stream()
                .filter(m -> "RoleBinding".equals(m.kind()))
                .filter(b -> list(b.doc(), "subjects").stream().anyMatch(
                        s -> "ServiceAccount".equals(text(s, "kind")) && account.equals(text(s, "name"))))
                .map(b -> map(b.doc(), "roleRef"))
                .filter(ref -> "Role".equals(text(ref, "kind")))
                .flatMap(ref -> find(manifests, "Role", text(ref, "name")).stream())
                .flatMap(role -> list(role.doc(), "rules").stream())
                .anyMatch(rule -> list(rule, "apiGroups").contains(apiGroup)
                        && list(rule, "resources").contains(resource)
                        && (list(rule, "verbs").contains(verb) || list(rule, "verbs").contains("*")));
        if (!allowed) {
            problems.add("k8s: no Role bound to ServiceAccount " + account + " allows " + verb + " on "
                    + (apiGroup.isEmpty() ? "core" : apiGroup) + " " + resource);
        }
    }

    /** Container env as name to value; null value for {@code valueFrom}. {@code envFrom} would hide names. */
    private static Map<String, String> env(Object container, String where, List<String> problems) {
        if (!list(container, "envFrom").isEmpty()) {
            problems.add(where + ": envFrom hides variable names from this check; list env explicitly");
        }
        Map<String, String> env = new LinkedHashMap<>();
        for (Object var : list(container, "env")) {
            env.put(text(var, "name"), text(var, "value"));
        }
        return env;
    }

    private static Map<String, Integer> containerPorts(Object container) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (Object port : list(container, "ports")) {
            ports.put(text(port, "name"), resolve(((Map<?, ?>) port).get("containerPort"), Map.of()));
        }
        return ports;
    }

    /** A port given by number (int or numeric text) or by container port name; null if unresolvable. */
    private static Integer resolve(Object port, Map<String, Integer> byName) {
        if (port instanceof Integer) {
            return (Integer) port;
        }
        String text = String.valueOf(port);
        return text.matches("\\d+") ? Integer.valueOf(text) : byName.get(text);
    }

    private static void expectText(String where, String what, String expected, Object actual, List<String> problems) {
        if (!expected.equals(actual == null ? null : String.valueOf(actual))) {
            problems.add(where + ": " + what + " is " + actual + ", expected " + expected);
        }
    }

    private static Optional<Manifest> find(List<Manifest> manifests, String kind, String name) {
        return manifests.stream().filter(m -> kind.equals(m.kind()) && name.equals(m.name())).findFirst();
    }
}
