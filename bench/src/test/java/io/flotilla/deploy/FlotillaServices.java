package io.flotilla.deploy;

import io.flotilla.protocol.Ports;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The expected deployment of every Flotilla service, from ARCHITECTURE "Ports" through
 * {@link Ports}: the single table every descriptor check compares against.
 */
final class FlotillaServices {

    /** Where every Flotilla service finds Kafka: the compose service / Kubernetes Service {@code kafka}. */
    static final String KAFKA_ADDRESS = "kafka:" + Ports.KAFKA;

    /** Compose service names whose ports/env follow {@link #worker(int)}: {@code worker-<n>}. */
    private static final Pattern WORKER_NAME = Pattern.compile("worker-(\\d+)");

    /** Compose service names of router replicas after the first ({@link #router(int)}): {@code router-<n>}. */
    private static final Pattern ROUTER_NAME = Pattern.compile("router-(\\d+)");

    /** Compose runs two routers as two services; the gateway is given both, comma-separated. */
    static final String COMPOSE_ROUTER_ADDRESSES = router(0).name() + ":" + Ports.routerGrpc(0) + ","
            + router(1).name() + ":" + Ports.routerGrpc(1);

    /** Kubernetes runs the router Deployment's replicas behind a headless Service: one DNS record per ready pod. */
    static final String KUBERNETES_ROUTER_ADDRESS = "dns:///router-headless:" + Ports.ROUTER_GRPC;

    /**
     * One service.
     *
     * @param name           compose service name, Kubernetes Service/Deployment name and host name
     *                       other services use for it
     * @param module         Maven module (build context, image {@code flotilla/<module>})
     * @param ports          the ports it listens on, by Kubernetes container port name; compose
     *                       publishes exactly these, on the same host port
     * @param managementPort the actuator port (health probes, Prometheus scrape)
     * @param env            environment variables every deployment of it must set, with the exact
     *                       value (ports, and host:port addresses of the services it calls)
     */
    record ServiceSpec(String name, String module, Map<String, Integer> ports, int managementPort,
                       Map<String, String> env) {
    }

    private FlotillaServices() {
    }

    /** The gateway as compose runs it: given both router services. */
    static ServiceSpec gateway() {
        return gateway(COMPOSE_ROUTER_ADDRESSES);
    }

    /** The gateway given {@code routerAddress} (a comma-separated list of gRPC targets). */
    static ServiceSpec gateway(String routerAddress) {
        return new ServiceSpec("gateway", "gateway-service",
                ports("http", Ports.GATEWAY_HTTP, "management", Ports.GATEWAY_MANAGEMENT),
                Ports.GATEWAY_MANAGEMENT,
                env(Ports.GATEWAY_HTTP, Ports.GATEWAY_MANAGEMENT, "FLOTILLA_GATEWAY_ROUTER_ADDRESS", routerAddress));
    }

    static ServiceSpec router() {
        return router(0);
    }

    /** Router replica n: gRPC and actuator ports as {@link Ports#routerGrpc} and {@link Ports#routerManagement}. */
    static ServiceSpec router(int n) {
        return new ServiceSpec(Ports.routerName(n), "router-service",
                ports("grpc", Ports.routerGrpc(n), "management", Ports.routerManagement(n)),
                Ports.routerManagement(n),
                env(Ports.routerManagement(n), Ports.routerManagement(n),
                        "FLOTILLA_ROUTER_GRPC_PORT", String.valueOf(Ports.routerGrpc(n)),
                        "FLOTILLA_ROUTER_INDEXER_ADDRESS", kvIndexer().name() + ":" + Ports.INDEXER_GRPC));
    }

    /** The router's ext_proc port in EPP mode (flotilla.router.epp.port's default, the port the Inference Extension's EPP uses). */
    static final int ROUTER_EPP_PORT = 9002;

    /** The InferencePool's target port in k8s/overlays/epp: vLLM's server port beside each worker agent. */
    static final int EPP_POOL_TARGET_PORT = 8000;

    /** The router with EPP mode on ({@code FLOTILLA_ROUTER_EPP_ENABLED=true}): also serves ext_proc. */
    static ServiceSpec routerEpp() {
        ServiceSpec router = router(0);
        Map<String, Integer> ports = new LinkedHashMap<>(router.ports());
        ports.put("epp", ROUTER_EPP_PORT);
        Map<String, String> env = new LinkedHashMap<>(router.env());
        env.put("FLOTILLA_ROUTER_EPP_PORT", String.valueOf(ROUTER_EPP_PORT));
        env.put("FLOTILLA_ROUTER_EPP_TARGET_PORT", String.valueOf(EPP_POOL_TARGET_PORT));
        return new ServiceSpec(router.name(), router.module(), Map.copyOf(ports), router.managementPort(), Map.copyOf(env));
    }

    static ServiceSpec kvIndexer() {
        return new ServiceSpec("kv-indexer", "kv-indexer-service",
                ports("grpc", Ports.INDEXER_GRPC, "management", Ports.INDEXER_MANAGEMENT),
                Ports.INDEXER_MANAGEMENT,
                env(Ports.INDEXER_MANAGEMENT, Ports.INDEXER_MANAGEMENT,
                        "FLOTILLA_INDEXER_GRPC_PORT", String.valueOf(Ports.INDEXER_GRPC)));
    }

    /** The planner serves its HTTP API and actuator on one port, named {@code http}. */
    static ServiceSpec planner() {
        return new ServiceSpec("planner", "planner-service",
                ports("http", Ports.PLANNER_HTTP),
                Ports.PLANNER_MANAGEMENT,
                env(Ports.PLANNER_HTTP, Ports.PLANNER_MANAGEMENT));
    }

    /** Worker n: gRPC 7100+n, transfer 7300+n, actuator 8100+n (also its server.port). */
    static ServiceSpec worker(int n) {
        return new ServiceSpec(Ports.workerId(n), "worker-agent",
                ports("grpc", Ports.workerGrpc(n), "transfer", Ports.workerTransfer(n),
                        "management", Ports.workerManagement(n)),
                Ports.workerManagement(n),
                env(Ports.workerManagement(n), Ports.workerManagement(n),
                        "FLOTILLA_WORKER_GRPC_PORT", String.valueOf(Ports.workerGrpc(n)),
                        "FLOTILLA_WORKER_TRANSFER_PORT", String.valueOf(Ports.workerTransfer(n))));
    }

    /** The services that are not workers. */
    static List<ServiceSpec> controlServices() {
        return List.of(gateway(), router(), kvIndexer(), planner());
    }

    /** The spec for a compose service or Kubernetes Service name, if it is a Flotilla service. */
    static Optional<ServiceSpec> byName(String name) {
        Matcher worker = WORKER_NAME.matcher(name);
        if (worker.matches()) {
            return Optional.of(worker(Integer.parseInt(worker.group(1))));
        }
        Matcher router = ROUTER_NAME.matcher(name);
        if (router.matches() && Integer.parseInt(router.group(1)) > 0
                && Integer.parseInt(router.group(1)) < Ports.MAX_ROUTERS) {
            return Optional.of(router(Integer.parseInt(router.group(1))));
        }
        return controlServices().stream().filter(s -> s.name().equals(name)).findFirst();
    }

    private static Map<String, Integer> ports(Object... nameThenPort) {
        Map<String, Integer> ports = new LinkedHashMap<>();
        for (int i = 0; i < nameThenPort.length; i += 2) {
            ports.put((String) nameThenPort[i], (Integer) nameThenPort[i + 1]);
        }
        return Map.copyOf(ports);
    }

    /** Env every service sets: Kafka address, server.port, management.server.port, plus {@code more}. */
    private static Map<String, String> env(int serverPort, int managementPort, String... more) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("SPRING_KAFKA_BOOTSTRAP_SERVERS", KAFKA_ADDRESS);
        env.put("SERVER_PORT", String.valueOf(serverPort));
        env.put("MANAGEMENT_SERVER_PORT", String.valueOf(managementPort));
        for (int i = 0; i < more.length; i += 2) {
            env.put(more[i], more[i + 1]);
        }
        return Map.copyOf(env);
    }
}
