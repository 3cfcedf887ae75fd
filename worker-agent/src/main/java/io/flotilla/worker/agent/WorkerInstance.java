package io.flotilla.worker.agent;

import io.flotilla.protocol.grpc.GrpcEndpoint;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.worker.api.AgentHandoffPath;
import io.flotilla.worker.api.HandoffPath;
import io.flotilla.worker.api.KvSnapshots;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.kv.KvTransferNode;
import io.grpc.BindableService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * One worker: its engine, its WorkerService endpoint and its state publishing. Several can live in
 * one JVM (simulated fleets); they share the Kafka producer, the report scheduler, the KV event sender and gRPC's event
 * loops and executor; each has its own listening socket, engine and state. The WorkerService is built
 * by {@link WorkerFleet} from the engine and the worker's {@link HandoffPath}; it does not know this class.
 * The endpoint comes bound (its port is in the identity) and serves the WorkerService from {@link #start()}.
 */
public final class WorkerInstance implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(WorkerInstance.class);

    private final WorkerIdentity identity;
    private final Engine engine;
    private final KvEventPublisher events;
    private final StatusReporter status;
    private final WorkerMetrics metrics;
    private final HandoffPath handoffs;
    private final GrpcEndpoint endpoint;
    private final BindableService service;
    private final ScheduledExecutorService scheduler;
    private final int heartbeatMs;
    private final int loadReportMs;
    private ScheduledFuture<?> heartbeats;
    private volatile boolean started;
    private ScheduledFuture<?> loadReports;

    public WorkerInstance(WorkerIdentity identity, Engine engine, KvEventPublisher events, StatusReporter status,
                          WorkerMetrics metrics, HandoffPath handoffs, GrpcEndpoint endpoint, BindableService service,
                          ScheduledExecutorService scheduler, int heartbeatMs, int loadReportMs) {
        this.identity = identity;
        this.engine = engine;
        this.events = events;
        this.status = status;
        this.metrics = metrics;
        this.handoffs = handoffs;
        this.scheduler = scheduler;
        this.heartbeatMs = heartbeatMs;
        this.loadReportMs = loadReportMs;
        this.endpoint = endpoint;
        this.service = service;
    }

    public WorkerIdentity identity() {
        return identity;
    }

    public Engine engine() {
        return engine;
    }

    public WorkerMetrics metrics() {
        return metrics;
    }

    /** How this worker brings KV in from elsewhere. */
    public HandoffPath handoffs() {
        return handoffs;
    }

    /** The transfer agent side; empty unless the worker's handoffs go through Flotilla's agent. */
    public Optional<KvTransferNode> transfer() {
        return handoffs instanceof AgentHandoffPath a ? Optional.of(a.node()) : Optional.empty();
    }

    public WorkerState state() {
        return status.state();
    }

    public int grpcPort() {
        return endpoint.port();
    }

    public boolean serving() {
        return endpoint.running() && status.state() == WorkerState.WORKER_STATE_READY;
    }

    /** Serves the WorkerService on the endpoint, registers as READY and starts heartbeats and load reports. */
    public synchronized void start() {
        endpoint.start().addService(service);
        status.setState(WorkerState.WORKER_STATE_READY);
        started = true;
        heartbeats = scheduler.scheduleAtFixedRate(this::heartbeat, heartbeatMs, heartbeatMs, TimeUnit.MILLISECONDS);
        loadReports = scheduler.scheduleAtFixedRate(this::reportLoad, loadReportMs, loadReportMs, TimeUnit.MILLISECONDS);
        log.info("{} ready: epoch {}, role {}, model {}, gRPC {}", identity.id(), Long.toUnsignedString(identity.epoch()),
                identity.role(), identity.model(), identity.endpoint());
    }

    /** The resident blocks of every tier, stamped with the KV event seq they correspond to. */
    public KvSnapshot snapshot() {
        return KvSnapshots.snapshot(identity, engine);
    }

    /**
     * Publishes a heartbeat now rather than at the next interval (from any thread; nothing before {@link #start()}):
     * a changed adapter set goes out at once, so routers stop pricing a load that already happened.
     */
    public void advertiseNow() {
        if (started) {
            scheduler.execute(this::heartbeat);
        }
    }

    /**
     * Stops taking new requests (DRAINING), lets in-flight work finish until {@code deadline}, then
     * publishes STOPPED. Completes with the number of requests still in flight at that point.
     */
    public CompletableFuture<Integer> drain(Duration deadline) {
        return drain(identity, engine, status, deadline);
    }

    /** {@link #drain(Duration)} of the worker made of these parts (the WorkerService's Drain). */
    static CompletableFuture<Integer> drain(WorkerIdentity identity, Engine engine, StatusReporter status,
                                            Duration deadline) {
        status.setState(WorkerState.WORKER_STATE_DRAINING);
        return engine.drain()
                .completeOnTimeout(null, deadline.toMillis(), TimeUnit.MILLISECONDS)
                .thenApply(ignored -> {
                    int left = engine.load().inFlight();
                    status.publishStopped(2000);
                    log.info("{} drained; {} requests still in flight", identity.id(), left);
                    return left;
                });
    }

    /**
     * Heartbeat, after following the engine's health: an engine that stops answering makes the
     * worker UNHEALTHY (routers stop sending it requests) until it answers again. Draining and
     * stopped workers stay as they are.
     */
    private void heartbeat() {
        try {
            WorkerState state = status.state();
            boolean healthy = engine.healthy();
            if (state == WorkerState.WORKER_STATE_READY && !healthy) {
                log.warn("{}: engine is not answering; leaving the routable set (UNHEALTHY)", identity.id());
                status.setState(WorkerState.WORKER_STATE_UNHEALTHY);
                return;
            }
            if (state == WorkerState.WORKER_STATE_UNHEALTHY && healthy) {
                log.info("{}: engine answers again; READY", identity.id());
                status.setState(WorkerState.WORKER_STATE_READY);
                return;
            }
            status.heartbeat();
        } catch (RuntimeException e) {
            log.debug("{} heartbeat failed: {}", identity.id(), e.toString());
        }
    }

    private void reportLoad() {
        try {
            status.reportLoadIfChanged(heartbeatMs);
        } catch (RuntimeException e) {
            log.debug("{} load report failed: {}", identity.id(), e.toString());
        }
    }

    /**
     * Orderly stop: STOPPED first (routers drop us at once), then the endpoint, then the engine, then
     * the transfer agent (which owns the engine's KV memory).
     */
    @Override
    public synchronized void close() {
        if (heartbeats != null) {
            heartbeats.cancel(false);
            loadReports.cancel(false);
        }
        status.publishStopped(2000);
        endpoint.close();
        engine.close();
        handoffs.close(); // after the engine: a transfer agent owns the engine's KV memory
        events.close();
    }
}
