package io.flotilla.worker.agent;

import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.hash.KvNamespace;
import io.flotilla.protocol.kafka.BoundedSender;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.WorkerCapacity;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.worker.api.AgentHandoffPath;
import io.flotilla.worker.api.EngineHandoffPath;
import io.flotilla.worker.api.HandoffPath;
import io.flotilla.worker.api.LocalGenerate;
import io.flotilla.worker.api.LocalKvPath;
import io.flotilla.worker.api.WorkerGrpcService;
import io.flotilla.worker.settings.WorkerProperties;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineKvTransfer;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.KvTierStatus;
import io.flotilla.worker.engine.KvTransferSupport;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.kv.EngineHandoffs;
import io.flotilla.worker.kv.KvTransferNode;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.grpc.ObservationGrpcServerInterceptor;
import io.micrometer.observation.ObservationRegistry;
import org.apache.kafka.clients.producer.Producer;
import org.springframework.context.SmartLifecycle;

import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The workers of this JVM ({@code flotilla.worker.instances}, usually one). Started after the
 * context is ready, stopped first on shutdown so every worker publishes STOPPED before Kafka and
 * the web server go away. Co-hosted workers share the Kafka producer, the report scheduler, the KV
 * event sender thread and gRPC's event loops and executor; per worker there is a listening socket, an
 * engine (a simulated one parks its one thread while idle) and its state.
 */
public final class WorkerFleet implements SmartLifecycle {

    private static final Logger log = LoggerFactory.getLogger(WorkerFleet.class);
    private static final SecureRandom EPOCHS = new SecureRandom();

    private final WorkerProperties properties;
    private final EngineFactory engines;
    private final Producer<String, Object> producer;
    private final Producer<String, Object> reports;
    private final ScheduledExecutorService scheduler;
    private final MeterRegistry registry;
    private final Clock clock;
    private final int managementPort;
    private final EngineTiming timing;
    private final ObservationRegistry observations;
    private final List<WorkerInstance> workers = new ArrayList<>();
    /** Every worker's KV event batches to the producer, on one thread (see {@link KvEventPublisher}). */
    private BoundedSender<Runnable> kvSender;
    private volatile boolean running;
    /** This pod's place in a multi-pod instance (LeaderWorkerSet), read at start. */
    private Optional<GroupLayout> group = Optional.empty();

    /**
     * @param producer     KV event batches (sent as soon as they are sealed)
     * @param reports      membership heartbeats and load reports: state, sampled every few hundred milliseconds, so
     *                     its producer may linger longer and send a JVM's workers' reports in a few requests
     * @param observations every worker's Generate calls and engine time are observed here (traces, grpc.server timers)
     */
    public WorkerFleet(WorkerProperties properties, EngineFactory engines, Producer<String, Object> producer,
                       Producer<String, Object> reports, ScheduledExecutorService scheduler, MeterRegistry registry,
                       Clock clock, int managementPort, EngineTiming timing, ObservationRegistry observations) {
        this.observations = observations;
        this.properties = properties;
        this.engines = engines;
        this.producer = producer;
        this.reports = reports;
        this.scheduler = scheduler;
        this.registry = registry;
        this.clock = clock;
        this.managementPort = managementPort;
        this.timing = timing;
    }

    public List<WorkerInstance> workers() {
        return List.copyOf(workers);
    }

    @Override
    public synchronized void start() {
        WorkerProperties.Sim sim = properties.sim();
        WorkerCapacity capacity = WorkerCapacity.newBuilder()
                .setTotalKvBlocks(sim.totalBlocks())
                .setMaxRunning(sim.maxRunning())
                .setMaxBatchTokens(sim.maxBatchTokens())
                .setMaxContextTokens(sim.maxContext())
                .build();
        KvNamespace namespace = KvNamespace.of(properties.model(), properties.tokenizerId(), properties.kvLayout());
        WorkerRole role = WorkerRole.valueOf("WORKER_ROLE_" + properties.role().toUpperCase(Locale.ROOT));
        String host = properties.advertisedHost();
        group = GroupLayout.fromEnvironment(System.getenv());
        if (group.isPresent() && properties.instances() > 1) {
            throw new IllegalStateException("a pod of a LeaderWorkerSet group runs one worker; flotilla.worker.instances is "
                    + properties.instances());
        }
        group.ifPresent(g -> log.info("rank {} of {} in group {} (leader {}){}", g.rank(), g.size(), g.groupId(),
                g.leaderAddress(), g.leader() ? "" : ": not publishing membership, the leader is the routable worker"));
        kvSender = new BoundedSender<>("kv-events", properties.eventBuffer() * properties.instances(), Runnable::run);
        try {
            for (int i = 0; i < properties.instances(); i++) {
                long epoch = EPOCHS.nextLong();
                // bound before the identity is made: with grpc-port 0 the port advertised is the one the kernel gave
                GrpcEndpoint endpoint = new GrpcEndpoint(properties.workerId(i), "0.0.0.0", properties.grpcPort(i), List.of(),
                        List.of(new ObservationGrpcServerInterceptor(observations))).start();
                WorkerInstance worker;
                try {
                    worker = build(i, new WorkerIdentity(properties.workerId(i), epoch == 0 ? 1 : epoch, role, namespace,
                            sim.blockSize(), host + ":" + endpoint.port(), host + ":" + properties.transferPort(i),
                            host + ":" + managementPort), endpoint, capacity);
                } catch (RuntimeException e) {
                    endpoint.close();
                    throw e;
                }
                workers.add(worker);
                worker.start();
            }
        } catch (RuntimeException e) {
            stop();
            throw e;
        }
        running = true;
    }

    /** Worker i of this JVM on its bound {@code endpoint}: engine, event stream, status, metrics, WorkerService. */
    private WorkerInstance build(int i, WorkerIdentity id, GrpcEndpoint endpoint, WorkerCapacity capacity) {
        KvEventPublisher events = new KvEventPublisher(id, producer, clock, kvSender);
        Timer steps = WorkerMetrics.stepTimer(registry, id);
        // the engine exists before the worker that advertises it: adapter changes reach the worker once built
        AtomicReference<WorkerInstance> built = new AtomicReference<>();
        Engine engine = engines.create(id, i, new EngineListeners(events, ms -> WorkerMetrics.recordStep(steps, ms),
                () -> {
                    WorkerInstance w = built.get();
                    if (w != null) {
                        w.advertiseNow();
                    }
                }));
        Advertisement advertised = "sim".equals(properties.engine()) ? Advertisement.simulated(capacity, timing)
                : Advertisement.external(engine, properties.http().kvCapacityBlocks());
        StatusReporter status = new StatusReporter(id, engine, reports, clock, properties.leaseMs(), advertised,
                new StatusReporter.Registration(properties.tokenizerSourceOrDefault(), properties.engineKind(), group));
        WorkerMetrics metrics = new WorkerMetrics(registry, id, engine, events, status);
        engine.feature(AdapterSupport.class).ifPresent(metrics::bindAdapters);
        engine.feature(KvTierStatus.class).ifPresent(metrics::bindTiers);
        LocalGenerate local = new LocalGenerate(id, engine, metrics, observations, properties.engine());
        HandoffPath handoffs = handoffPath(id, engine, local, i);
        WorkerGrpcService service = new WorkerGrpcService(local, handoffs,
                deadline -> WorkerInstance.drain(id, engine, status, deadline));
        WorkerInstance worker = new WorkerInstance(id, engine, events, status, metrics, handoffs, endpoint, service,
                scheduler, properties.heartbeatMs(), properties.loadReportMs());
        built.set(worker);
        return worker;
    }

    /**
     * How this worker brings KV in from elsewhere, chosen once from its role and what its engine can do:
     * the engine's own connector (vLLM {@code kv_transfer_params}) when it has one, else Flotilla's
     * transfer agent when the engine can hand its KV memory to it, else only its own tiers.
     */
    private HandoffPath handoffPath(WorkerIdentity id, Engine engine, LocalGenerate local, int i) {
        WorkerProperties.Transfer settings = properties.transfer();
        if (!settings.enabledFor(properties.role())) {
            return new LocalKvPath(local);
        }
        var engineSide = engine.feature(EngineKvTransfer.class);
        if (engineSide.isPresent()) {
            log.info("{}: KV moves engine to engine (kv_transfer_params); handoffs stay usable for {} ms", id.id(),
                    properties.http().handoffTtlMs());
            return new EngineHandoffPath(local, new EngineHandoffs(engineSide.get(), clock,
                    Duration.ofMillis(properties.http().handoffTtlMs())));
        }
        KvTransferSupport kv = engine.feature(KvTransferSupport.class).orElse(null);
        if (kv == null) {
            log.warn("{}: the engine cannot hand KV off (simulated engines need kv-bytes-per-block > 0); "
                    + "Prefill is refused and handoffs are prefilled locally", id.id());
            return new LocalKvPath(local);
        }
        if (properties.transferPort(i) == 0) {
            engine.close();
            throw new IllegalStateException(id.id() + ": flotilla.worker.transfer-port 0 cannot be advertised; give the "
                    + "transfer agent a port, or turn it off (flotilla.worker.transfer.enabled=false, or "
                    + "flotilla.worker.sim.kv-bytes-per-block=0)");
        }
        try {
            String host = settings.listenHost() == null || settings.listenHost().isBlank()
                    ? properties.advertisedHost() : settings.listenHost();
            return new AgentHandoffPath(local, KvTransferNode.open(id, kv, settings, host, properties.transferPort(i),
                    clock, scheduler, local.metrics()));
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    @Override
    public synchronized void stop() {
        for (int i = workers.size() - 1; i >= 0; i--) {
            workers.get(i).close();
        }
        workers.clear();
        if (kvSender != null) {
            kvSender.close(); // after the workers: their last batches go out
        }
        producer.flush();
        reports.flush();
        running = false;
    }

    @Override
    public boolean isRunning() {
        return running;
    }

    /** Start last, stop first. */
    @Override
    public int getPhase() {
        return Integer.MAX_VALUE - 1000;
    }
}
