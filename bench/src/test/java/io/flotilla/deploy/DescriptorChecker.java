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
import java.util.TreeMap;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks docker-compose.yml and the Prometheus scrape config against {@link FlotillaServices} and
 * the configuration keys each application reads, and checks one container's environment (shared
 * with {@link KubernetesChecker}). Every method takes parsed YAML trees and returns the problems
 * found, one readable line each, empty when the descriptor is right; none throws on a wrong
 * descriptor, so a test can feed it a deliberately broken copy.
 */
final class DescriptorChecker {

    /** Env read by the Flotilla images' ENTRYPOINT ({@code java $JAVA_OPTS -jar}), not by Spring. */
    static final Set<String> IMAGE_ENV = Set.of("JAVA_OPTS");

    /** Env name prefixes that set Spring configuration keys in Flotilla containers. */
    static final List<String> SPRING_ENV_PREFIXES = List.of("SPRING_", "SERVER_", "MANAGEMENT_", "FLOTILLA_");

    /** Third-party images (repository without tag) and the env name prefixes each reads itself. */
    static final Map<String, List<String>> FOREIGN_IMAGE_ENV = Map.of(
            "apache/kafka", List.of("KAFKA_"),
            "grafana/grafana", List.of("GF_"),
            "prom/prometheus", List.of(),
            "redis", List.of(),
            "vllm/vllm-openai", List.of("VLLM_", "HF_"));

    /** Env names that carry a port or an address: each must have an exact value in {@link ServiceSpec#env()}. */
    static final Pattern WIRING_ENV = Pattern.compile(".*_(PORT|ADDRESS|SERVERS)");

    /** Services compose must define: every Flotilla service, two routers, two workers, and the infrastructure. */
    static final List<String> COMPOSE_SERVICES = List.of("kafka", "kv-indexer", "router", Ports.routerName(1), "planner", "gateway",
            Ports.workerId(0), Ports.workerId(1), "prometheus", "grafana");

    static final String METRICS_PATH = "/actuator/prometheus";
    static final String READINESS_PATH = "/actuator/health/readiness";
    static final String LIVENESS_PATH = "/actuator/health/liveness";

    /** Prometheus scraping itself: the one scrape target that is not a Flotilla management port. */
    private static final String PROMETHEUS_SELF_TARGET = "localhost:9090";
    private static final Pattern HEALTHCHECK_PORT = Pattern.compile("/dev/tcp/[^/\\s]+/(\\d+)");

    private final Function<String, ConfigKeys> keysOfModule;

    /** @param keysOfModule the configuration keys the application of a Maven module reads */
    DescriptorChecker(Function<String, ConfigKeys> keysOfModule) {
        this.keysOfModule = keysOfModule;
    }

    /** Problems in a parsed docker-compose.yml. */
    List<String> checkCompose(Map<String, Object> compose) {
        List<String> problems = new ArrayList<>();
        Map<String, Object> services = map(compose, "services");
        for (String required : COMPOSE_SERVICES) {
            if (!services.containsKey(required)) {
                problems.add("docker-compose.yml: no service '" + required + "'");
            }
        }
        services.forEach((name, service) -> {
            String where = "docker-compose.yml services." + name;
            String image = text(service, "image");
            String module = buildModule(service);
            Map<String, String> env = composeEnv(service);
            if (module == null && (image == null || !image.startsWith("flotilla/"))) {
                checkForeignEnv(where, image, env, problems);
                if ("kafka".equals(name)
                        && !Integer.valueOf(Ports.KAFKA).equals(publishedPorts(service, where, problems).get(Ports.KAFKA))) {
                    problems.add(where + ": does not publish " + Ports.KAFKA + ":" + Ports.KAFKA);
                }
                return;
            }
            Optional<ServiceSpec> spec = FlotillaServices.byName(name);
            if (spec.isEmpty()) {
                problems.add(where + ": Flotilla service with no entry in FlotillaServices (unknown ports)");
                return;
            }
            checkComposeService(where, spec.get(), module, image, service, env, problems);
        });
        return problems;
    }

    private void checkComposeService(String where, ServiceSpec spec, String module, String image, Object service,
                                     Map<String, String> env, List<String> problems) {
        if (!spec.module().equals(module)) {
            problems.add(where + ": build context is " + module + ", expected ./" + spec.module());
        }
        if (image == null || !image.matches("flotilla/" + Pattern.quote(spec.module()) + "(:.+)?")) {
            problems.add(where + ": image is " + image + ", expected flotilla/" + spec.module());
        }
        Map<Integer, Integer> expectedPorts = new TreeMap<>();
        spec.ports().values().forEach(p -> expectedPorts.put(p, p));
        Map<Integer, Integer> published = publishedPorts(service, where, problems);
        if (!published.equals(expectedPorts)) {
            problems.add(where + ": publishes (container=host) " + published + ", expected " + expectedPorts);
        }
        String healthcheck = String.valueOf(map(service, "healthcheck").get("test"));
        Matcher port = HEALTHCHECK_PORT.matcher(healthcheck);
        if (!port.find() || Integer.parseInt(port.group(1)) != spec.managementPort()
                || !healthcheck.contains(READINESS_PATH)) {
            problems.add(where + ": healthcheck does not ask " + READINESS_PATH + " on management port "
                    + spec.managementPort());
        }
        if (spec.module().equals(FlotillaServices.worker(0).module())) {
            // Each compose worker is one worker: its id and the host others reach it at are its service name.
            for (String var : List.of("FLOTILLA_WORKER_ID", "FLOTILLA_WORKER_ADVERTISED_HOST")) {
                if (!spec.name().equals(env.get(var))) {
                    problems.add(where + ": " + var + " is " + env.get(var) + ", expected " + spec.name());
                }
            }
        }
        checkFlotillaEnv(where, spec, env, problems);
    }

    /** Problems in a parsed Prometheus config, given the compose model whose services it scrapes. */
    List<String> checkPrometheus(Map<String, Object> prometheus, Map<String, Object> compose) {
        List<String> problems = new ArrayList<>();
        Map<String, String> metricsPathByTarget = new LinkedHashMap<>();
        for (Object job : list(prometheus, "scrape_configs")) {
            String path = Optional.ofNullable(text(job, "metrics_path")).orElse("/metrics");
            for (Object staticConfig : list(job, "static_configs")) {
                for (Object target : list(staticConfig, "targets")) {
                    metricsPathByTarget.put(String.valueOf(target), path);
                }
            }
        }
        metricsPathByTarget.forEach((target, path) -> {
            if (target.equals(PROMETHEUS_SELF_TARGET)) {
                return;
            }
            int colon = target.lastIndexOf(':');
            Optional<ServiceSpec> spec = FlotillaServices.byName(colon < 0 ? target : target.substring(0, colon));
            if (spec.isEmpty() || !map(compose, "services").containsKey(spec.get().name())) {
                problems.add("prometheus.yml: target " + target + " is no Flotilla service in docker-compose.yml");
            } else if (!target.equals(spec.get().name() + ":" + spec.get().managementPort())) {
                problems.add("prometheus.yml: target " + target + " is not the management port "
                        + spec.get().managementPort() + " of " + spec.get().name());
            }
        });
        for (String service : map(compose, "services").keySet()) {
            FlotillaServices.byName(service).ifPresent(spec -> {
                String target = spec.name() + ":" + spec.managementPort();
                if (!metricsPathByTarget.containsKey(target)) {
                    problems.add("prometheus.yml: no scrape target " + target + " for compose service " + service);
                } else if (!METRICS_PATH.equals(metricsPathByTarget.get(target))) {
                    problems.add("prometheus.yml: target " + target + " scrapes " + metricsPathByTarget.get(target)
                            + ", expected " + METRICS_PATH);
                }
            });
        }
        return problems;
    }

    /**
     * Checks the environment of one container running {@code spec}: every variable is exempt
     * ({@link #IMAGE_ENV}) or binds, by relaxed binding, to a key the module reads; every variable of
     * {@code spec.env()} is set to exactly its value; no other port/address variable is set.
     * A null value stands for a variable set from elsewhere (Kubernetes {@code valueFrom}).
     */
    void checkFlotillaEnv(String where, ServiceSpec spec, Map<String, String> env, List<String> problems) {
        ConfigKeys keys = keysOfModule.apply(spec.module());
        env.forEach((name, value) -> {
            if (IMAGE_ENV.contains(name)) {
                return;
            }
            if (SPRING_ENV_PREFIXES.stream().noneMatch(name::startsWith)) {
                problems.add(where + ": env " + name + " is no Spring configuration variable and not exempt");
            } else if (!keys.bindsEnv(name)) {
                problems.add(where + ": env " + name + " binds to no configuration key " + spec.module() + " reads");
            }
            String expected = spec.env().get(name);
            if (expected != null && !expected.equals(value)) {
                problems.add(where + ": env " + name + " is " + value + ", expected " + expected);
            } else if (expected == null && WIRING_ENV.matcher(name).matches()) {
                problems.add(where + ": env " + name + " sets a port or address that FlotillaServices does not know");
            }
        });
        spec.env().forEach((name, expected) -> {
            if (!env.containsKey(name)) {
                problems.add(where + ": env " + name + " is not set, expected " + expected);
            }
        });
    }

    /**
     * Checks the environment of a third-party container: only the prefixes its image reads
     * ({@link #FOREIGN_IMAGE_ENV}), plus helper variables that another variable of the same
     * container references as {@code $(NAME)} (Kubernetes dependent environment variables).
     */
    static void checkForeignEnv(String where, String image, Map<String, String> env, List<String> problems) {
        List<String> prefixes = FOREIGN_IMAGE_ENV.get(imageRepository(image));
        if (prefixes == null) {
            problems.add(where + ": image " + image + " is neither flotilla/* nor a known third-party image");
            return;
        }
        env.keySet().forEach(name -> {
            boolean referenced = env.values().stream().anyMatch(v -> v != null && v.contains("$(" + name + ")"));
            if (prefixes.stream().noneMatch(name::startsWith) && !referenced) {
                problems.add(where + ": env " + name + " is not read by image " + image);
            }
        });
    }

    /** {@code registry/name} without {@code :tag}; null for null. */
    static String imageRepository(String image) {
        if (image == null) {
            return null;
        }
        int colon = image.lastIndexOf(':');
        return colon > image.lastIndexOf('/') ? image.substring(0, colon) : image;
    }

    /** The module directory of a compose {@code build:} (string or {@code context:}); null without build. */
    private static String buildModule(Object service) {
        Object build = service instanceof Map ? ((Map<?, ?>) service).get("build") : null;
        String context = build instanceof Map ? text(build, "context") : build == null ? null : String.valueOf(build);
        return context == null ? null : context.replaceFirst("^\\./", "").replaceFirst("/$", "");
    }

    /** Compose {@code environment:} as a map (map form, or list of {@code NAME=value}). */
    private static Map<String, String> composeEnv(Object service) {
        Map<String, String> env = new LinkedHashMap<>();
        Object raw = service instanceof Map ? ((Map<?, ?>) service).get("environment") : null;
        if (raw instanceof Map) {
            ((Map<?, ?>) raw).forEach((k, v) -> env.put(String.valueOf(k), v == null ? null : String.valueOf(v)));
        } else if (raw instanceof List) {
            for (Object item : (List<?>) raw) {
                String[] kv = String.valueOf(item).split("=", 2);
                env.put(kv[0], kv.length > 1 ? kv[1] : null);
            }
        }
        return env;
    }

    /** Compose {@code ports:} as container port to host port (short {@code [ip:]host:container[/proto]} or long form). */
    private static Map<Integer, Integer> publishedPorts(Object service, String where, List<String> problems) {
        Map<Integer, Integer> published = new TreeMap<>();
        for (Object entry : list(service, "ports")) {
            try {
                if (entry instanceof Map) {
                    published.put(Integer.valueOf(text(entry, "target")), Integer.valueOf(text(entry, "published")));
                } else {
                    String[] parts = String.valueOf(entry).replaceFirst("/(tcp|udp)$", "").split(":");
                    published.put(Integer.valueOf(parts[parts.length - 1]),
                            parts.length > 1 ? Integer.valueOf(parts[parts.length - 2]) : null);
                }
            } catch (NumberFormatException e) {
                problems.add(where + ": port entry " + entry + " is not host:container with fixed numbers");
            }
        }
        return published;
    }
}
