package io.flotilla.cluster.launcher;

import io.flotilla.protocol.Ports;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Which processes a local cluster runs and with which ports and settings (ARCHITECTURE "Ports").
 * Workers are numbered from 0: worker n has id worker-n, gRPC 7100+n, transfer 7300+n, management 8100+n.
 * Every model has its own pool of {@code aggregated} workers (or {@code prefill} + {@code decode}), the
 * models' pools in the order the models are given: with models A and B and two workers each, workers 0
 * and 1 serve A and 2 and 3 serve B; with a P/D layout each model's prefill workers come first. Every
 * model also has its own planner (planner, planner-1, …), planning that model's pools.
 *
 * @param aggregated      aggregated workers per model (ignored when prefill or decode is positive)
 * @param prefill         prefill workers per model
 * @param decode          decode workers per model
 * @param routerMode      initial routing mode
 * @param kafkaBootstrap  bootstrap servers every service uses
 * @param stateDir        the launcher's state directory (.flotilla)
 * @param simSpeedup      simulated engines run this many times faster than their timing model
 * @param models          the served models (1 … {@link Ports#MAX_MODELS}, distinct names): each one's name,
 *                        tokenizer and block size go to its workers, its planner and every gateway alike, so
 *                        they hash blocks in one namespace; the first is the gateways' default model
 * @param routers         router replicas (1 … {@link Ports#MAX_ROUTERS}); they share bookings over
 *                        flotilla.router-sync and every gateway is given every one of them
 * @param kafkaConfig     a properties file of {@code spring.kafka.*} client settings (security protocol, SASL,
 *                        TLS) every service imports ({@code --spring.config.import}, so no secret appears on a
 *                        command line); null for none
 * @param kvbm            the simulated workers' KV tiers below the device and their device pool size
 * @param gateways        the gateway replicas and where they share their limits
 */
public record ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                            java.nio.file.Path stateDir, double simSpeedup, List<ServedModel> models, int routers,
                            java.nio.file.Path kafkaConfig, KvbmOptions kvbm, GatewayOptions gateways) {

    public ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                         java.nio.file.Path stateDir, double simSpeedup, ServedModel model, int routers,
                         java.nio.file.Path kafkaConfig, KvbmOptions kvbm) {
        this(aggregated, prefill, decode, routerMode, kafkaBootstrap, stateDir, simSpeedup, List.of(model), routers,
                kafkaConfig, kvbm, GatewayOptions.ONE);
    }

    public ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                         java.nio.file.Path stateDir, double simSpeedup, ServedModel model) {
        this(aggregated, prefill, decode, routerMode, kafkaBootstrap, stateDir, simSpeedup, model, 1, null,
                KvbmOptions.NONE);
    }

    public ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                         java.nio.file.Path stateDir, double simSpeedup, ServedModel model, int routers) {
        this(aggregated, prefill, decode, routerMode, kafkaBootstrap, stateDir, simSpeedup, model, routers, null,
                KvbmOptions.NONE);
    }

    public ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                         java.nio.file.Path stateDir, double simSpeedup, ServedModel model, KvbmOptions kvbm) {
        this(aggregated, prefill, decode, routerMode, kafkaBootstrap, stateDir, simSpeedup, model, 1, null, kvbm);
    }

    public ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                         java.nio.file.Path stateDir) {
        this(aggregated, prefill, decode, routerMode, kafkaBootstrap, stateDir, 1.0);
    }

    public ClusterLayout(int aggregated, int prefill, int decode, String routerMode, String kafkaBootstrap,
                         java.nio.file.Path stateDir, double simSpeedup) {
        this(aggregated, prefill, decode, routerMode, kafkaBootstrap, stateDir, simSpeedup, ServedModel.DEFAULT);
    }

    public ClusterLayout {
        java.util.Objects.requireNonNull(gateways, "gateways");
        kvbm = kvbm == null ? KvbmOptions.NONE : kvbm;
        models = List.copyOf(models);
        if (models.isEmpty() || models.size() > Ports.MAX_MODELS) {
            throw new IllegalArgumentException("a cluster serves 1 to " + Ports.MAX_MODELS + " models, not " + models.size());
        }
        if (models.stream().map(ServedModel::name).distinct().count() != models.size()) {
            throw new IllegalArgumentException("every --model must be a different name: " + models.stream()
                    .map(ServedModel::name).toList());
        }
        if (routers < 1 || routers > Ports.MAX_ROUTERS) {
            throw new IllegalArgumentException("routers must be between 1 and " + Ports.MAX_ROUTERS + ": " + routers);
        }
    }

    static final String SERVICE_HEAP = "256m";
    static final String WORKER_HEAP = "320m";

    /** The first model: the gateways' default, and the only one of a one-model cluster. */
    public ServedModel model() {
        return models.get(0);
    }

    /** Workers of each model's pool. */
    public int workersPerModel() {
        return disaggregated() ? prefill + decode : aggregated;
    }

    public int workerCount() {
        return workersPerModel() * models.size();
    }

    public boolean disaggregated() {
        return prefill > 0 || decode > 0;
    }

    /** Role of worker n under this layout. */
    public String roleOf(int n) {
        if (!disaggregated()) {
            return "aggregated";
        }
        return n % workersPerModel() < prefill ? "prefill" : "decode";
    }

    /** The model worker n serves. */
    public ServedModel modelOf(int n) {
        int m = workersPerModel() == 0 ? 0 : n / workersPerModel();
        return models.get(Math.min(m, models.size() - 1));
    }

    /** Every Flotilla service process, in start order (Kafka is not included), with the planner in shadow mode. */
    public List<ServiceSpec> services() {
        return services(PlannerOptions.SHADOW);
    }

    /** Every Flotilla service process, in start order (Kafka is not included), the planner run as {@code planner} says. */
    public List<ServiceSpec> services(PlannerOptions planner) {
        return services(planner, ExternalEngines.NONE);
    }

    /** As {@link #services(PlannerOptions)}, worker n in front of {@code engines}' engine n when they are external. */
    public List<ServiceSpec> services(PlannerOptions planner, ExternalEngines engines) {
        List<ServiceSpec> out = new ArrayList<>();
        List<String> kafka = kafkaArgs();
        out.add(new ServiceSpec("kv-indexer", "kv-indexer-service",
                ports("grpc", Ports.INDEXER_GRPC, "mgmt", Ports.INDEXER_MANAGEMENT), Ports.INDEXER_MANAGEMENT,
                with(kafka, "--server.port=" + Ports.INDEXER_MANAGEMENT, "--flotilla.indexer.grpc-port=" + Ports.INDEXER_GRPC,
                        "--flotilla.indexer.snapshot-dir=" + stateDir.resolve("indexer")), SERVICE_HEAP));
        for (int n = 0; n < routers; n++) {
            out.add(router(n));
        }
        for (int m = 0; m < models.size(); m++) {
            out.add(planner(m, kafka, planner));
        }
        for (int n = 0; n < workerCount(); n++) {
            out.add(worker(n, engines));
        }
        for (int g = 0; g < gateways.replicas(); g++) {
            out.add(gateway(g));
        }
        return out;
    }

    /** Gateway replica n: every router, every model (the first as the default), the shared limits. */
    public ServiceSpec gateway(int n) {
        List<String> args = new ArrayList<>(with(kafkaArgs(), "--server.port=" + Ports.gatewayHttp(n),
                "--management.server.port=" + Ports.gatewayManagement(n),
                "--flotilla.gateway.router-address=" + routerAddresses()));
        args.addAll(model().gatewayArgs());
        models.stream().skip(1).forEach(m -> args.addAll(m.gatewayModelArgs()));
        args.addAll(gateways.args());
        return new ServiceSpec(Ports.gatewayName(n), "gateway-service",
                ports("http", Ports.gatewayHttp(n), "mgmt", Ports.gatewayManagement(n)), Ports.gatewayManagement(n),
                args, SERVICE_HEAP);
    }

    /** Every gateway's base URL, {@code http://127.0.0.1:<port>}, in order. */
    public List<String> gatewayUrls() {
        List<String> out = new ArrayList<>();
        for (int g = 0; g < gateways.replicas(); g++) {
            out.add("http://127.0.0.1:" + Ports.gatewayHttp(g));
        }
        return out;
    }

    /** Router replica n as its own process (named, ported by {@link Ports#routerName} and friends). */
    public ServiceSpec router(int n) {
        if (n < 0 || n >= routers) {
            throw new IllegalArgumentException("this cluster has " + routers + " router" + (routers == 1 ? "" : "s")
                    + " (0 … " + (routers - 1) + "), not router " + n);
        }
        return new ServiceSpec(Ports.routerName(n), "router-service",
                ports("grpc", Ports.routerGrpc(n), "mgmt", Ports.routerManagement(n)), Ports.routerManagement(n),
                with(kafkaArgs(), "--server.port=" + Ports.routerManagement(n),
                        "--flotilla.router.name=" + Ports.routerName(n), "--flotilla.router.grpc-port=" + Ports.routerGrpc(n),
                        "--flotilla.router.indexer.address=127.0.0.1:" + Ports.INDEXER_GRPC, "--flotilla.router.mode=" + routerMode),
                SERVICE_HEAP);
    }

    /** Every router's gRPC address, comma-separated: the gateway's {@code flotilla.gateway.router-address}. */
    public String routerAddresses() {
        List<String> out = new ArrayList<>();
        for (int n = 0; n < routers; n++) {
            out.add("127.0.0.1:" + Ports.routerGrpc(n));
        }
        return String.join(",", out);
    }

    /** The Kafka settings every service gets: the bootstrap address and, with a client config file, its import. */
    List<String> kafkaArgs() {
        List<String> args = new ArrayList<>();
        args.add("--spring.kafka.bootstrap-servers=" + kafkaBootstrap);
        if (kafkaConfig != null) {
            args.add("--spring.config.import=file:" + kafkaConfig.toAbsolutePath());
        }
        return args;
    }

    private static List<String> with(List<String> first, String... rest) {
        List<String> all = new ArrayList<>(first);
        all.addAll(List.of(rest));
        return all;
    }

    /** The planner of model m, planning that model's pools. */
    private ServiceSpec planner(int m, List<String> kafka, PlannerOptions planner) {
        List<String> args = new ArrayList<>(with(kafka, "--server.port=" + Ports.plannerHttp(m)));
        args.addAll(models.get(m).plannerArgs());
        args.addAll(planner.args(simSpeedup));
        return new ServiceSpec(Ports.plannerName(m), "planner-service", ports("http", Ports.plannerHttp(m)),
                Ports.plannerHttp(m), args, SERVICE_HEAP);
    }

    /** Worker n as its own process, with a simulated engine. */
    public ServiceSpec worker(int n) {
        return worker(n, ExternalEngines.NONE);
    }

    /** Worker n as its own process, in front of {@code engines}' engine n when they are external. */
    public ServiceSpec worker(int n, ExternalEngines engines) {
        List<String> args = new ArrayList<>(workerArgs(n));
        args.addAll(modelOf(n).workerArgs());
        args.addAll(engines.workerArgs(n));
        if (!engines.real()) {
            args.addAll(kvbm.workerArgs(Ports.workerId(n), stateDir));
        }
        return new ServiceSpec(Ports.workerId(n), "worker-agent",
                ports("grpc", Ports.workerGrpc(n), "transfer", Ports.workerTransfer(n), "mgmt", Ports.workerManagement(n)),
                Ports.workerManagement(n), args, WORKER_HEAP, kvbm.workerDirectMemory());
    }

    private List<String> workerArgs(int n) {
        return with(kafkaArgs(),
                "--server.port=" + Ports.workerManagement(n),
                "--flotilla.worker.index=" + n,
                "--flotilla.worker.id=" + Ports.workerId(n),
                "--flotilla.worker.grpc-port=" + Ports.workerGrpc(n),
                "--flotilla.worker.transfer-port=" + Ports.workerTransfer(n),
                "--flotilla.worker.advertised-host=127.0.0.1",
                "--flotilla.worker.role=" + roleOf(n),
                "--flotilla.worker.sim.speedup=" + simSpeedup);
    }

    private static Map<String, Integer> ports(Object... kv) {
        Map<String, Integer> m = new LinkedHashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], (Integer) kv[i + 1]);
        }
        return m;
    }
}
