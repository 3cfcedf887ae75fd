package io.flotilla.cluster.launcher;

import io.flotilla.cluster.kafka.KafkaBroker;
import io.flotilla.cluster.redis.RedisServer;
import io.flotilla.cluster.zipkin.ZipkinServer;
import io.flotilla.protocol.Ports;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The local cluster behind {@code bin/flotilla}: a real Kafka broker and every Flotilla service as its
 * own JVM, with state in {@code .flotilla/} so later invocations can inspect and stop it.
 */
public final class LocalCluster {

    public static final String KAFKA = "kafka";
    /** The broker's -Xmx: half the 384m it had; with the smaller dedupe buffer 128m also starts (docs/benchmarks.md). */
    static final String BROKER_HEAP = "192m";
    public static final String REDIS = "redis";
    public static final String ZIPKIN = "zipkin";
    /** How long start-worker waits for another command (another start-worker, up, down) to release the lock. */
    static final Duration START_LOCK_WAIT = Duration.ofSeconds(60);

    private final Path root;
    private final Path stateDir;
    private final ProcessControl processes;
    private final PrintStream out;
    private final boolean classDataSharing;

    public LocalCluster(Path root, PrintStream out) {
        this(root, root.resolve(".flotilla"), out);
    }

    /**
     * @param root     repository root: jars are taken from {@code <root>/<module>/target}
     * @param stateDir where state, logs and Kafka data go (tests use their own)
     */
    public LocalCluster(Path root, Path stateDir, PrintStream out) {
        this(root, stateDir, out, true);
    }

    /**
     * @param classDataSharing {@code up} builds a missing class-data archive per service jar and starts the services
     *                         from theirs ({@link ClassDataArchives}); false ({@code --no-cds}) neither builds nor uses one
     */
    public LocalCluster(Path root, Path stateDir, PrintStream out, boolean classDataSharing) {
        this.root = root.toAbsolutePath().normalize();
        this.stateDir = stateDir.toAbsolutePath().normalize();
        this.processes = new ProcessControl(this.root, this.stateDir.resolve("logs"));
        this.out = out;
        this.classDataSharing = classDataSharing;
    }

    /** Tenant isolation and LoRA adapters of the next {@code up} ({@link Tenancy#NONE} unless set). */
    private Tenancy tenancy = Tenancy.NONE;

    public LocalCluster tenancy(Tenancy t) {
        this.tenancy = t;
        return this;
    }

    /** Tracing and log format of the next {@code up} ({@link Observability#NONE} unless set). */
    private Observability observability = Observability.NONE;

    public LocalCluster observability(Observability o) {
        this.observability = o;
        return this;
    }

    /** The simulated fleet of the next {@code up} ({@link FleetOptions#NONE} unless set): its JVMs join the services. */
    private FleetOptions fleet = FleetOptions.NONE;

    public LocalCluster fleet(FleetOptions f) {
        this.fleet = f;
        return this;
    }

    /** The indexer processes of the next {@code up} ({@link IndexerShardOptions#ONE} unless set). */
    private IndexerShardOptions indexerShards = IndexerShardOptions.ONE;

    LocalCluster indexerShards(IndexerShardOptions shards) {
        this.indexerShards = shards;
        return this;
    }

    /** How the workers of the next {@code up} compile, and so every worker started later in that cluster. */
    private WorkerJit workerJit = WorkerJit.QUICK;

    LocalCluster workerJit(WorkerJit jit) {
        this.workerJit = jit;
        return this;
    }

    private static List<String> modelNames(ClusterLayout layout) {
        return layout.models().stream().map(ServedModel::name).toList();
    }

    public Path stateDir() {
        return stateDir;
    }

    /**
     * Starts Kafka (unless the spec names an existing one), a Redis when the gateways share their limits in one
     * the launcher runs, a Zipkin with {@code --tracing}, and every service the spec lays out: its models side by
     * side (each its own pool and planner), its router replicas sharing bookings over flotilla.router-sync, its
     * gateway replicas given every router and every model. Waits until each answers healthy and records them. On
     * any failure everything started is stopped and a {@link LauncherException} names the cause.
     */
    public List<RunningService> up(ClusterSpec spec) {
        String externalKafka = spec.externalKafka();
        GatewayOptions gateways = spec.gateways();
        PlannerOptions planner = spec.planner();
        ExternalEngines engines = spec.engines();
        Duration timeout = spec.timeout();
        try (LauncherLock ignored = lock()) {
            ClusterState state = requireIdle();
            state.delete();
            String kafkaAddress = externalKafka == null ? "127.0.0.1:" + Ports.KAFKA : externalKafka;
            ClusterLayout layout;
            try {
                layout = new ClusterLayout(spec.workers(), spec.prefill(), spec.decode(), spec.routerMode(), kafkaAddress,
                        stateDir, spec.simSpeedup(), spec.models(), spec.routers(),
                        spec.kafkaConfig() == null ? null : spec.kafkaConfig().toAbsolutePath().normalize(), spec.kvbm(),
                        gateways);
            } catch (IllegalArgumentException e) {
                throw new LauncherException(e.getMessage());
            }
            if (gateways.launchesRedis() && RedisServer.binary().isEmpty()) {
                throw new LauncherException(gateways.replicas() + " gateways share their limits through Redis and this "
                        + "machine has no redis-server: " + RedisServer.INSTALL_HINT + "; or pass --redis HOST:PORT (an "
                        + "existing Redis), or --redis none (every gateway counts its limits alone)");
            }
            checkPortsFree(layout, externalKafka == null);
            List<ServiceSpec> extra = new ArrayList<>(fleet.services(layout));
            extra.addAll(indexerShards.apply(layout.services()).stream().filter(s -> s.name().startsWith("kv-indexer-")).toList());
            for (ServiceSpec s : extra) {
                if (ProcessControl.portInUse(s.managementPort())) {
                    throw new LauncherException("port " + s.managementPort() + " (" + s.name() + " mgmt) is already in use");
                }
            }
            if (observability.launchZipkin() && ProcessControl.portInUse(ZipkinServer.PORT)) {
                throw new LauncherException("port " + ZipkinServer.PORT + " (zipkin) is already in use; stop what holds it "
                        + "or pass --tracing-endpoint URL instead of --tracing");
            }
            if (observability.launchZipkin() && !java.nio.file.Files.isRegularFile(ZipkinServer.jarIn(root))) {
                throw new LauncherException("no Zipkin server jar at " + display(ZipkinServer.jarIn(root))
                        + "; fetch it with ./mvnw -pl local-cluster dependency:copy@copy-zipkin-server (bin/flotilla up --tracing does)");
            }
            record(state, layout, planner, engines);
            fleet.save(state);
            observability.save(state);
            state.setLayout("cds", Boolean.toString(classDataSharing));
            workerJit.save(state);
            tenancy.save(state);
            Instant begin = Instant.now();
            List<RunningService> started = new ArrayList<>();
            try {
                if (externalKafka == null) {
                    started.add(startKafka());
                    state.put(started.get(started.size() - 1));
                    state.save();
                }
                if (gateways.launchesRedis()) {
                    started.add(startRedis());
                    state.put(started.get(started.size() - 1));
                    state.save();
                }
                if (observability.launchZipkin()) {
                    started.add(startZipkin());
                    state.put(started.get(started.size() - 1));
                    state.save();
                }
                // Training runs need the broker (a service's Kafka admin waits for it while its context refreshes)
                // and the free ports; the time they take once per jar is reported apart from the start's.
                Duration training = classDataSharing ? train(layout) : Duration.ZERO;
                List<ServiceSpec> specs = withFleet(indexerShards.apply(layout.services(planner, engines)),
                                fleet.services(layout)).stream()
                        .map(service -> observability.apply(tenancy.apply(service, modelNames(layout)))).toList();
                for (ServiceSpec service : specs) {
                    RunningService s = processes.launch(service, classDataSharing, workerJit);
                    started.add(s);
                    state.put(s);
                    state.save();
                }
                awaitHealthy(started, begin.plus(timeout).plus(training)); // the timeout is the start's, not the training's
                Duration took = Duration.between(begin, Instant.now()).minus(training);
                out.printf("Flotilla is up in %.1f s%s%n", took.toMillis() / 1000.0, training.isZero() ? ""
                        : String.format(" (after %.1f s building class-data archives)", training.toMillis() / 1000.0));
                if (observability.launchZipkin()) {
                    out.println("traces: " + ZipkinServer.uiUrl(ZipkinServer.PORT));
                }
                return started;
            } catch (RuntimeException | IOException e) {
                out.println("stopping what was started ...");
                ProcessControl.stop(started, Duration.ofSeconds(10));
                state.delete();
                if (e instanceof IOException io) {
                    throw new LauncherException("cannot start a process: " + io.getMessage());
                }
                throw (RuntimeException) e;
            }
        }
    }

    /** {@code services} with the fleet's JVMs before the gateways (which start last, as ever). */
    private static List<ServiceSpec> withFleet(List<ServiceSpec> services, List<ServiceSpec> fleetJvms) {
        List<ServiceSpec> out = new ArrayList<>(services.stream().filter(s -> !s.module().equals("gateway-service")).toList());
        out.addAll(fleetJvms);
        out.addAll(services.stream().filter(s -> s.module().equals("gateway-service")).toList());
        return out;
    }

    /**
     * Builds the class-data archives the services lack, each from a training run of its service as the default
     * cluster configures it (simulated engine, no KV tiers, state in a scratch directory) on {@code layout}'s Kafka:
     * a run never touches an external engine, a worker's disk tier or the indexer's snapshots, and the ports it
     * binds are ones every layout has, checked free.
     */
    private Duration train(ClusterLayout layout) {
        Path scratch = stateDir.resolve("cds-training");
        ClusterLayout training = new ClusterLayout(1, 0, 0, "kv", layout.kafkaBootstrap(), scratch, 1.0,
                ServedModel.DEFAULT, 1, layout.kafkaConfig(), KvbmOptions.NONE);
        try {
            return processes.prepareArchives(training.services(), workerJit, out);
        } finally {
            KafkaBroker.deleteRecursively(scratch);
        }
    }

    /** Records the layout in the state, so that start-worker (and the planner's local connector) starts workers alike. */
    static void record(ClusterState state, ClusterLayout layout, PlannerOptions planner, ExternalEngines engines) {
        state.setLayout("aggregated", Integer.toString(layout.aggregated()));
        state.setLayout("prefill", Integer.toString(layout.prefill()));
        state.setLayout("decode", Integer.toString(layout.decode()));
        state.setLayout("router-mode", layout.routerMode());
        state.setLayout("routers", Integer.toString(layout.routers()));
        state.setLayout("kafka", layout.kafkaBootstrap());
        state.setLayout("kafka-config", layout.kafkaConfig() == null ? "" : layout.kafkaConfig().toString());
        state.setLayout("sim-speedup", Double.toString(layout.simSpeedup()));
        state.setLayout("planner", planner.connector());
        engines.save(state);
        layout.kvbm().save(state);
        layout.gateways().save(state);
        state.setLayout("models", Integer.toString(layout.models().size()));
        for (int m = 0; m < layout.models().size(); m++) {
            layout.models().get(m).save(state, m);
        }
    }

    /** The layout {@link #record} recorded (without the external engines: {@link ExternalEngines#load}). */
    static ClusterLayout recordedLayout(ClusterState state, Path stateDir) {
        List<ServedModel> models = new ArrayList<>();
        int count = Integer.parseInt(state.layout("models", "1"));
        for (int m = 0; m < count; m++) {
            models.add(ServedModel.load(state, m));
        }
        String redis = state.layout("redis", "");
        GatewayOptions gateways = new GatewayOptions(Integer.parseInt(state.layout("gateways", "1")),
                redis.isEmpty() ? null : redis, java.util.Map.of());
        return new ClusterLayout(Integer.parseInt(state.layout("aggregated", "2")),
                Integer.parseInt(state.layout("prefill", "0")), Integer.parseInt(state.layout("decode", "0")),
                state.layout("router-mode", "kv"), state.layout("kafka", "127.0.0.1:" + Ports.KAFKA), stateDir,
                Double.parseDouble(state.layout("sim-speedup", "1.0")), models,
                Integer.parseInt(state.layout("routers", "1")),
                state.layout("kafka-config", "").isEmpty() ? null : Path.of(state.layout("kafka-config", "")),
                KvbmOptions.load(state), gateways);
    }

    /** The recorded state, after checking that none of its processes still runs. */
    public ClusterState requireIdle() {
        ClusterState state = ClusterState.load(stateDir);
        List<RunningService> alive = state.alive();
        if (!alive.isEmpty()) {
            throw new LauncherException("a Flotilla cluster is already running ("
                    + String.join(", ", alive.stream().map(s -> s.name() + " pid " + s.pid()).toList())
                    + "); run bin/flotilla down first");
        }
        return state;
    }

    /** Stops every recorded process (SIGTERM, then SIGKILL after {@code grace}) and forgets them. */
    public int down(Duration grace) {
        try (LauncherLock ignored = lock()) {
            ClusterState state = ClusterState.load(stateDir);
            List<RunningService> services = state.services().stream()
                    .filter(s -> !KAFKA.equals(s.name()) && !REDIS.equals(s.name()) && !ZIPKIN.equals(s.name())).toList();
            List<RunningService> alive = state.alive();
            ProcessControl.stop(services, grace);
            for (String store : List.of(ZIPKIN, REDIS, KAFKA)) { // after the services: they flush to them while stopping
                Optional.ofNullable(state.get(store)).ifPresent(k -> ProcessControl.stop(List.of(k), Duration.ofSeconds(20)));
            }
            List<RunningService> left = state.alive();
            if (!left.isEmpty()) {
                throw new LauncherException("processes survived SIGKILL: " + left);
            }
            state.delete();
            return alive.size();
        }
    }

    public List<RunningService> status() {
        return ClusterState.load(stateDir).services();
    }

    /** SIGKILL worker n, for failure drills. */
    public RunningService killWorker(int n) {
        try (LauncherLock ignored = lock()) {
            if (FleetOptions.load(ClusterState.load(stateDir)).enabled()) {
                throw new LauncherException("this cluster runs its workers as a --fleet: SIGKILL a fleet JVM (fleet-j, "
                        + "pids in bin/flotilla status) to drop its workers at once");
            }
        }
        return kill(Ports.workerId(n));
    }

    /** SIGKILL router replica n, for failure drills. */
    public RunningService killRouter(int n) {
        return kill(routerName(n));
    }

    private RunningService kill(String name) {
        try (LauncherLock ignored = lock()) {
            ClusterState state = ClusterState.load(stateDir);
            RunningService s = state.get(name);
            if (s == null || !s.alive()) {
                throw new LauncherException(name + " is not running");
            }
            s.handle().ifPresent(ProcessHandle::destroyForcibly);
            long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
            while (s.alive() && System.nanoTime() < deadline) {
                ProcessControl.sleep(20);
            }
            return s;
        }
    }

    /**
     * Starts worker n (again) with the layout of the running cluster and waits until it is healthy. The
     * launcher lock is held (waited for up to {@link #START_LOCK_WAIT}) only to launch and record the
     * process, not while it starts, so several workers can start at once (the planner's local connector
     * scales a pool up by more than one).
     */
    public RunningService startWorker(int n, Duration timeout) {
        return start(Ports.workerId(n), (layout, state) -> {
            if (FleetOptions.load(state).enabled()) { // worker-n lives in a fleet JVM: a second one would share its id
                throw new LauncherException("this cluster runs its workers as a --fleet; start-worker starts a worker of a "
                        + "--workers cluster (a fleet JVM is stopped and started as a whole with down and up)");
            }
            return layout.worker(n, ExternalEngines.load(state));
        }, timeout);
    }

    /** Starts router replica n (again), configured as {@code up} configured it, and waits until it is healthy. */
    public RunningService startRouter(int n, Duration timeout) {
        return start(routerName(n), (layout, state) -> {
            try {
                return layout.router(n);
            } catch (IllegalArgumentException e) {
                throw new LauncherException(e.getMessage());
            }
        }, timeout);
    }

    private RunningService start(String name, java.util.function.BiFunction<ClusterLayout, ClusterState, ServiceSpec> specOf,
                                 Duration timeout) {
        RunningService s;
        try (LauncherLock ignored = LauncherLock.acquire(stateDir.resolve("launcher.lock"), START_LOCK_WAIT)) {
            ClusterState state = ClusterState.load(stateDir);
            if (state.isEmpty()) {
                throw new LauncherException("no cluster is running; start one with bin/flotilla up");
            }
            RunningService existing = state.get(name);
            if (existing != null && existing.alive()) {
                throw new LauncherException(name + " is already running (pid " + existing.pid() + ")");
            }
            ClusterLayout recorded = recordedLayout(state, stateDir);
            ServiceSpec spec = Observability.load(state).apply(
                    Tenancy.load(state).apply(specOf.apply(recorded, state), modelNames(recorded)));
            for (int port : spec.ports().values()) {
                if (ProcessControl.portInUse(port)) {
                    throw new LauncherException("port " + port + " (" + spec.name() + ") is already in use");
                }
            }
            try {
                s = processes.launch(spec, Boolean.parseBoolean(state.layout("cds", "true")),
                        WorkerJit.load(state));
            } catch (IOException e) {
                throw new LauncherException("cannot start " + spec.name() + ": " + e.getMessage());
            }
            state.put(s);
            state.save();
        }
        try {
            awaitHealthy(List.of(s), Instant.now().plus(timeout));
        } catch (RuntimeException e) {
            ProcessControl.stop(List.of(s), Duration.ofSeconds(5));
            throw e;
        }
        return s;
    }

    private static String routerName(int n) {
        try {
            return Ports.routerName(n);
        } catch (IllegalArgumentException e) {
            throw new LauncherException(e.getMessage());
        }
    }

    private RunningService startKafka() {
        Path dir = stateDir.resolve("kafka");
        KafkaBroker.deleteRecursively(dir); // every `up` starts from empty topics
        // No topics and no auto-create: every service creates (or checks) the topics it writes, as against
        // an operator's Kafka.
        KafkaBroker broker = new KafkaBroker(new KafkaBroker.Config(dir, Ports.KAFKA,
                System.getProperty("java.class.path"), BROKER_HEAP, false, false, Duration.ofSeconds(90)));
        broker.start();
        ProcessHandle h = ProcessHandle.of(broker.pid()).orElseThrow(() -> new LauncherException("Kafka exited at start"));
        return new RunningService(KAFKA, broker.pid(), h.info().startInstant().orElse(Instant.now()),
                "client=" + Ports.KAFKA, 0, broker.logFile());
    }

    /**
     * The gateways' Redis, on {@link Ports#REDIS}, outliving this launcher process like every service; from
     * an empty store (limits are soft state).
     */
    private RunningService startRedis() {
        Path dir = stateDir.resolve("redis");
        KafkaBroker.deleteRecursively(dir);
        RedisServer redis = new RedisServer(new RedisServer.Config(dir, Ports.REDIS, false, "64mb", Duration.ofSeconds(20)))
                .start();
        ProcessHandle h = ProcessHandle.of(redis.pid()).orElseThrow(() -> new LauncherException("Redis exited at start"));
        return new RunningService(REDIS, redis.pid(), h.info().startInstant().orElse(Instant.now()),
                "client=" + Ports.REDIS, 0, redis.logFile());
    }

    /** The trace store and UI of {@code up --tracing}, outliving this launcher process like every service; empty at start. */
    private RunningService startZipkin() {
        ZipkinServer zipkin = new ZipkinServer(ZipkinServer.jarIn(root), stateDir.resolve(ZIPKIN), ZipkinServer.PORT,
                Duration.ofSeconds(90)).start();
        ProcessHandle h = ProcessHandle.of(zipkin.pid()).orElseThrow(() -> new LauncherException("Zipkin exited at start"));
        return new RunningService(ZIPKIN, zipkin.pid(), h.info().startInstant().orElse(Instant.now()),
                "ui=" + ZipkinServer.PORT, 0, zipkin.logFile());
    }

    private void checkPortsFree(ClusterLayout layout, boolean withKafka) {
        if (withKafka && ProcessControl.portInUse(Ports.KAFKA)) {
            throw new LauncherException("port " + Ports.KAFKA + " (kafka) is already in use; stop what holds it or pass --kafka HOST:PORT");
        }
        if (layout.gateways().launchesRedis() && ProcessControl.portInUse(Ports.REDIS)) {
            throw new LauncherException("port " + Ports.REDIS + " (redis) is already in use; stop what holds it or pass "
                    + "--redis HOST:PORT");
        }
        for (ServiceSpec s : layout.services()) {
            s.ports().forEach((label, port) -> {
                if (ProcessControl.portInUse(port)) {
                    throw new LauncherException("port " + port + " (" + s.name() + " " + label + ") is already in use");
                }
            });
        }
    }

    private void awaitHealthy(List<RunningService> services, Instant deadline) {
        List<RunningService> pending = new ArrayList<>(services.stream().filter(s -> s.managementPort() > 0).toList());
        while (!pending.isEmpty()) {
            for (var it = pending.iterator(); it.hasNext(); ) {
                RunningService s = it.next();
                if (!s.alive()) {
                    throw new LauncherException(s.name() + " exited during start-up; see " + display(s.log())
                            + tailOf(s));
                }
                if (ProcessControl.health(s.managementPort()).filter(code -> code == 200).isPresent()) {
                    it.remove();
                }
            }
            if (!pending.isEmpty() && Instant.now().isAfter(deadline)) {
                RunningService s = pending.get(0);
                throw new LauncherException(s.name() + " did not become healthy in time; see " + display(s.log())
                        + ProcessControl.unhealthyComponents(s.managementPort()) + tailOf(s));
            }
            ProcessControl.sleep(250);
        }
    }

    private String display(Path p) {
        return p.startsWith(root) ? root.relativize(p).toString() : p.toString();
    }

    private static String tailOf(RunningService s) {
        List<String> lines = ProcessControl.tail(s.log(), 5);
        return lines.isEmpty() ? "" : "\n  | " + String.join("\n  | ", lines);
    }

    private LauncherLock lock() {
        return LauncherLock.acquire(stateDir.resolve("launcher.lock"));
    }
}
