package io.flotilla.worker.agent;

import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.AdapterSlots;
import io.flotilla.protocol.v1.EngineTiming;
import io.flotilla.protocol.v1.IndexDigest;
import io.flotilla.protocol.v1.KvTier;
import io.flotilla.protocol.v1.KvTierLink;
import io.flotilla.protocol.v1.KvTierUsage;
import io.flotilla.protocol.v1.KvTiers;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.EmbeddingSupport;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineLoad;
import io.flotilla.worker.engine.EngineMeasurements;
import io.flotilla.worker.engine.KvTierStatus;
import io.flotilla.worker.engine.KvDigest;
import io.flotilla.worker.identity.WorkerIdentity;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Membership heartbeats ({@code flotilla.workers}) and load reports ({@code flotilla.worker-load})
 * of one worker. Sending never blocks the caller for long: a send that fails is counted and the
 * next heartbeat tries again.
 */
public final class StatusReporter {

    private final WorkerIdentity identity;
    private final Engine engine;
    private final Producer<String, Object> producer;
    private final Clock clock;
    private final int leaseMs;
    private final Advertisement advertisement;
    private final Registration registration;
    private final AtomicLong publishErrors = new AtomicLong();
    private volatile WorkerState state = WorkerState.WORKER_STATE_STARTING;
    /** The last load report sent, without its time, and when (guarded by this). */
    private WorkerLoad lastLoad;
    private long lastLoadSentMs;

    /**
     * The parts of the membership record that are configuration, not identity.
     *
     * @param tokenizerSource where a gateway can load the tokenizer of {@code identity}'s namespace
     * @param engine          "sim", "vllm" or "sglang"
     * @param group           its place in a multi-pod instance; empty for a single-pod worker. A rank other than
     *                        the leader publishes neither membership nor load: the group is one routable worker
     */
    public record Registration(String tokenizerSource, String engine, Optional<GroupLayout> group) {

        public Registration(String tokenizerSource, String engine) {
            this(tokenizerSource, engine, Optional.empty());
        }

        boolean publishes() {
            return group.map(GroupLayout::leader).orElse(true);
        }
    }

    public StatusReporter(WorkerIdentity identity, Engine engine, Producer<String, Object> producer, Clock clock,
                          int leaseMs, Advertisement advertisement, Registration registration) {
        this.identity = identity;
        this.engine = engine;
        this.producer = producer;
        this.clock = clock;
        this.leaseMs = leaseMs;
        this.advertisement = advertisement;
        this.registration = registration;
    }

    public WorkerState state() {
        return state;
    }

    /** Changes the advertised state and publishes it at once. */
    public Future<?> setState(WorkerState newState) {
        this.state = newState;
        return heartbeat();
    }

    public WorkerStatus status() {
        WorkerStatus.Builder b = WorkerStatus.newBuilder()
                .setWorkerId(identity.id())
                .setEpoch(identity.epoch())
                .setRole(identity.role())
                .setModel(identity.model())
                .setEndpoint(identity.endpoint())
                .setTransferEndpoint(identity.transferEndpoint())
                .setManagementEndpoint(identity.managementEndpoint())
                .setBlockSize(identity.blockSize())
                .setKvLayout(identity.kvLayout())
                .setTokenizerId(identity.namespace().tokenizerId())
                .setTokenizerSource(registration.tokenizerSource())
                .setEngine(registration.engine())
                .setCapacity(advertisement.capacity())
                .setCapacitySource(advertisement.capacitySource())
                .setCapabilities(advertisedCapabilities(engine))
                .setState(state)
                .setLeaseMs(leaseMs)
                .setTs(clock.millis()); // for ordering only: receivers run leases on their own clocks
        advertisement.timing().ifPresent(b::setTiming);
        engine.feature(KvTierStatus.class).ifPresent(t -> b.setKvTiers(advertised(t)));
        engine.feature(AdapterSupport.class).map(AdapterSupport::adapterStatus).ifPresent(a -> b.setAdapters(AdapterSlots.newBuilder().addAllLoaded(a.loaded())
                .addAllAvailable(a.available()).setMaxLoaded(a.maxLoaded()).setLoadMs(a.loadMs())
                .setLoadMsSource(a.loadMsSource())));
        b.setTenantIsolation(engine.tenantIsolation());
        registration.group().ifPresent(g -> b.setGroup(g.advertised()));
        return b.build();
    }

    /** The lower tiers and their links, as the router prices onboarding from them. */
    static KvTiers advertised(KvTierStatus status) {
        KvTiers.Builder b = KvTiers.newBuilder().setBytesPerBlock(status.bytesPerBlock());
        for (KvTierStatus.Tier t : status.tiers()) {
            if (t.tier() != KvTier.KV_TIER_DEVICE) {
                b.addTiers(KvTierLink.newBuilder().setTier(t.tier()).setCapacityBlocks(t.capacityBlocks())
                        .setBytesPerSecond(t.bytesPerSecond()));
            }
        }
        return b.build();
    }

    /** Publishes the membership record; nothing from a rank that does not lead its group. */
    public Future<?> heartbeat() {
        if (!registration.publishes()) {
            return CompletableFuture.completedFuture(null);
        }
        return send(Topics.WORKERS.name(), status());
    }

    public WorkerLoad loadReport() {
        EngineLoad load = engine.load();
        KvDigest d = engine.kvDigest();
        int capacity = advertisement.capacity().getTotalKvBlocks();
        WorkerLoad.Builder b = WorkerLoad.newBuilder();
        engine.feature(EngineMeasurements.class).flatMap(EngineMeasurements::learnedTiming).ifPresent(t -> b.setLearnedTiming(EngineTiming.newBuilder()
                        .setPrefillA(t.prefillA()).setPrefillB(t.prefillB()).setPrefillC(t.prefillC())
                        .setDecodeD2(t.decodeD2()).setDecodeD1(t.decodeD1()).setDecodeD0(t.decodeD0()).setSpeedup(1))
                .setPrefillSamples(t.prefillSamples()).setDecodeSamples(t.decodeSamples()));
        b.setWorkerId(identity.id())
                .setEpoch(identity.epoch())
                .setTs(clock.millis())
                .setRunning(load.running())
                .setWaiting(load.waiting())
                .setWaitingPrefillTokens(load.waitingPrefillTokens())
                .setActiveKvBlocks(load.activeKvBlocks())
                .setTotalKvBlocks(capacity > 0 ? capacity : load.totalKvBlocks())
                .setStepMs(load.lastStepMs())
                .setIndexDigest(IndexDigest.newBuilder()
                        .setCount(d.deviceCount())
                        .setXor(d.deviceXor())
                        .setKvSeq(d.position())
                        .setHostCount(d.hostCount())
                        .setHostXor(d.hostXor())
                        .setDiskCount(d.diskCount())
                        .setDiskXor(d.diskXor()));
        if (engine.feature(KvTierStatus.class).isPresent()) {
            b.addKvTierUsage(KvTierUsage.newBuilder().setTier(KvTier.KV_TIER_HOST).setUsedBlocks(d.hostCount()));
            b.addKvTierUsage(KvTierUsage.newBuilder().setTier(KvTier.KV_TIER_DISK).setUsedBlocks(d.diskCount()));
        }
        return b.build();
    }

    /** Publishes the load report; nothing from a rank that does not lead its group (its load is the leader's engine's). */
    public Future<?> reportLoad() {
        if (!registration.publishes()) {
            return CompletableFuture.completedFuture(null);
        }
        WorkerLoad report = loadReport();
        remember(report.toBuilder().clearTs().build(), clock.millis());
        return send(Topics.WORKER_LOAD.name(), report);
    }

    /**
     * Publishes this worker's load if it differs from the last report sent (anything but its time), or if the last
     * one went out {@code maxSilenceMs} or more ago; returns whether it sent. Routers and planners read every worker's
     * reports, so at fleet size the reports of idle or steady workers are most of their input: a steady load is
     * repeated only as often as the heartbeat, a changed one at the next sample as before.
     */
    public synchronized boolean reportLoadIfChanged(long maxSilenceMs) {
        if (!registration.publishes()) {
            return false;
        }
        WorkerLoad report = loadReport();
        long now = clock.millis();
        WorkerLoad untimed = report.toBuilder().clearTs().build();
        if (untimed.equals(lastLoad) && now - lastLoadSentMs < maxSilenceMs) {
            return false;
        }
        remember(untimed, now);
        send(Topics.WORKER_LOAD.name(), report);
        return true;
    }

    private synchronized void remember(WorkerLoad untimed, long sentMs) {
        lastLoad = untimed;
        lastLoadSentMs = sentMs;
    }

    /** Publishes STOPPED and waits (bounded) for Kafka to take it, so consumers drop us at once. */
    public void publishStopped(long timeoutMs) {
        try {
            setState(WorkerState.WORKER_STATE_STOPPED).get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            publishErrors.incrementAndGet(); // the lease expires on its own
        }
    }

    public long publishErrors() {
        return publishErrors.get();
    }

    private Future<?> send(String topic, Object value) {
        try {
            return producer.send(new ProducerRecord<>(topic, identity.id(), value), (meta, error) -> {
                if (error != null) {
                    publishErrors.incrementAndGet();
                }
            });
        } catch (RuntimeException e) {
            publishErrors.incrementAndGet();
            return CompletableFuture.failedFuture(e);
        }
    }

    /** The engine's sampling capabilities, with its embeddings when it has {@link EmbeddingSupport} (absent: it cannot embed). */
    static io.flotilla.protocol.v1.EngineCapabilities advertisedCapabilities(Engine engine) {
        io.flotilla.protocol.v1.EngineCapabilities sampling = engine.capabilities();
        return engine.feature(EmbeddingSupport.class)
                .map(e -> sampling.toBuilder().setEmbedding(io.flotilla.protocol.v1.EmbeddingCapability.newBuilder()
                        .setDimensions(e.dimensions()).setTruncatable(e.truncatable())).build())
                .orElse(sampling);
    }
}
