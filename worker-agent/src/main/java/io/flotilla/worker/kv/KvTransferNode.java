package io.flotilla.worker.kv;

import io.flotilla.transfer.Backend;
import io.flotilla.transfer.Implementation;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.transfer.TransferConfig;
import io.flotilla.worker.identity.WorkerIdentity;
import io.flotilla.worker.settings.WorkerProperties;
import io.flotilla.worker.engine.KvTransferSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The KV transfer side of one worker: its transfer agent (listening on the worker's transfer port,
 * named {@link #agentName}), the engine's KV memory registered with it, the lease table of its
 * prefills, the puller for handoffs it receives and the releaser that answers their sources.
 *
 * <p>Lifecycle: {@link #open} before the engine's first request (the engine's KV memory must come
 * from the agent); {@link #close} after the engine closed, since closing the agent frees that memory.
 */
public final class KvTransferNode implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(KvTransferNode.class);

    private final TransferAgent agent;
    private final KvRegions regions;
    private final KvTransferSupport engine;
    private final LeaseTable leases;
    private final KvPuller puller;
    private final LeaseReleaser releaser = new LeaseReleaser();
    private final ExecutorService pulls;
    private final ScheduledFuture<?> sweeper;
    private final Duration pullTimeout;
    private final Clock clock;

    private KvTransferNode(TransferAgent agent, KvTransferSupport engine, LeaseTable leases, TransferMeters metrics,
                           WorkerProperties.Transfer settings, ScheduledExecutorService scheduler, String workerId,
                           Clock clock) {
        this.agent = agent;
        this.clock = clock;
        this.engine = engine;
        this.regions = new KvRegions(agent);
        this.leases = leases;
        this.puller = new KvPuller(agent, regions, engine, metrics);
        this.pullTimeout = Duration.ofMillis(settings.pullTimeoutMs());
        AtomicInteger n = new AtomicInteger();
        this.pulls = Executors.newFixedThreadPool(settings.pullThreads(), r -> {
            Thread t = new Thread(r, workerId + "-kv-pull-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        long sweepMs = Math.max(50, Math.min(1000, settings.leaseTtlMs() / 4));
        this.sweeper = scheduler.scheduleWithFixedDelay(this::sweep, sweepMs, sweepMs, TimeUnit.MILLISECONDS);
    }

    /**
     * Opens the transfer side of {@code identity}'s worker and moves the engine's KV memory into the
     * agent's registered memory.
     *
     * @param listenHost address the agent binds and advertises
     * @param port       the worker's transfer port (0: ephemeral)
     */
    public static KvTransferNode open(WorkerIdentity identity, KvTransferSupport engine, WorkerProperties.Transfer settings,
                                      String listenHost, int port, Clock clock, ScheduledExecutorService scheduler,
                                      TransferMeters metrics) {
        TransferConfig config = TransferConfig.defaults()
                .withImplementation(Implementation.valueOf(settings.engine().toUpperCase(Locale.ROOT)))
                .withListen(listenHost, port)
                .withIoTimeout(Duration.ofMillis(settings.ioTimeoutMs()));
        List<Backend> backends = new ArrayList<>();
        for (String b : settings.backends().split(",")) {
            if (!b.isBlank()) {
                backends.add(Backend.valueOf(b.trim().toUpperCase(Locale.ROOT)));
            }
        }
        if (!backends.isEmpty()) {
            config = config.withBackends(backends.get(0), backends.subList(1, backends.size()).toArray(Backend[]::new));
        }
        TransferAgent agent = TransferAgent.create(agentName(identity.id(), identity.epoch()), config);
        try {
            LeaseTable leases = new LeaseTable(Long.toUnsignedString(identity.epoch(), 16), clock,
                    Duration.ofMillis(settings.leaseTtlMs()));
            KvTransferNode node = new KvTransferNode(agent, engine, leases, metrics, settings, scheduler, identity.id(),
                    clock);
            engine.useKvMemory(node.regions);
            metrics.bindLeases(leases);
            log.info("{} KV transfer agent '{}' ({} engine, backends {}) on {}:{}", identity.id(), agent.name(),
                    agent.implementation(), agent.enabledBackends(), listenHost, port);
            return node;
        } catch (RuntimeException e) {
            agent.close();
            throw e;
        }
    }

    /** The transfer agent name of a worker incarnation: {@code <worker id>.<epoch in hex>}. */
    public static String agentName(String workerId, long epoch) {
        return workerId + "." + Long.toUnsignedString(epoch, 16);
    }

    public KvTransferSupport engine() {
        return engine;
    }

    public KvRegions regions() {
        return regions;
    }

    public LeaseTable leases() {
        return leases;
    }

    public KvPuller puller() {
        return puller;
    }

    public LeaseReleaser releaser() {
        return releaser;
    }

    /** Where pulls run (each blocks on one transfer). */
    public ExecutorService pulls() {
        return pulls;
    }

    public Duration pullTimeout() {
        return pullTimeout;
    }

    /** The worker's clock (lease expiry, handoff checks). */
    public Clock clock() {
        return clock;
    }

    /** The agent's current metadata: a snapshot of its regions, handed to decode workers. */
    public byte[] agentMetadata() {
        return agent.localMetadata();
    }

    private void sweep() {
        try {
            leases.expire();
        } catch (RuntimeException e) {
            log.warn("KV lease sweep failed", e);
        }
    }

    /** Stops pulls and the sweeper, releases every lease, closes the agent (and frees its memory). */
    @Override
    public void close() {
        sweeper.cancel(false);
        pulls.shutdownNow();
        try {
            pulls.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        leases.close();
        releaser.close();
        agent.close();
    }
}
