package io.flotilla.router.service;

import io.flotilla.boot.trace.TracedRecord;
import io.flotilla.protocol.kafka.BoundedSender;
import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterSync;
import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.client.KvMatches;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.booking.BookingLedger;
import io.flotilla.router.core.Capacity;
import io.flotilla.router.core.ClusterSnapshot;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.KvOverlap;
import io.flotilla.router.core.PreviousWorkerHint;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.RoutingPolicy;
import io.flotilla.router.core.RoutingRequest;
import io.flotilla.router.booking.SequenceChange;
import io.flotilla.router.core.Signal;
import io.flotilla.router.core.Strategy;
import io.flotilla.router.core.WorkerView;
import org.apache.kafka.clients.producer.Producer;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;

/**
 * The router's request path: membership + overlap in, a decision out, booking after. Deciding is
 * {@link RoutingPolicy#decide} (pure); every state change goes through the {@link BookingLedger} and
 * is shared with other router replicas over {@code flotilla.router-sync}.
 */
public final class RequestRouter implements AutoCloseable {

    private final WorkerDirectory directory;
    private final BookingLedger ledger;
    private final IndexerClient indexer;
    /** Where overlap comes from: {@link #indexer} itself, or every indexer shard. */
    private final KvMatches matches;
    private final Producer<String, Object> producer;
    private final RouterMetrics metrics;
    private final Clock clock;
    private final RandomGenerator random;
    private final String routerId;
    private final AtomicLong syncErrors = new AtomicLong();
    /** Changes for other replicas, sent off the request path: Route runs on a transport thread and never waits for Kafka. */
    private final BoundedSender<TracedRecord<RouterSync>> sync;
    private volatile RoutingPolicy policy;
    /** Told about every change that may move capacity (the WatchCapacity publisher); never blocks. */
    private volatile Runnable capacityChanged = () -> { };

    public RequestRouter(RouterConfig config, WorkerDirectory directory, BookingLedger ledger, IndexerClient indexer,
                        Producer<String, Object> producer, RouterMetrics metrics, Clock clock, RandomGenerator random,
                        String routerId) {
        this(config, directory, ledger, indexer, indexer, producer, metrics, clock, random, routerId);
    }

    /** @param matches where overlap comes from when it is not {@code indexer} alone (indexer shards) */
    public RequestRouter(RouterConfig config, WorkerDirectory directory, BookingLedger ledger, IndexerClient indexer,
                         KvMatches matches, Producer<String, Object> producer, RouterMetrics metrics, Clock clock,
                         RandomGenerator random, String routerId) {
        this.matches = matches;
        this.directory = directory;
        this.ledger = ledger;
        this.indexer = indexer;
        this.producer = producer;
        this.metrics = metrics;
        this.clock = clock;
        this.random = random;
        this.routerId = routerId;
        this.policy = new RoutingPolicy(config, random);
        this.sync = new BoundedSender<>("router-sync", SYNC_QUEUE, this::send);
        directory.onViewChange((id, view) -> {
            ledger.workerChanged(id, view);
            capacityChanged.run();
        });
    }

    /** Changes waiting for Kafka before new ones are dropped (and counted as sync errors). */
    static final int SYNC_QUEUE = 65_536;

    /** Decides and books {@code proto} (blocking while the indexer answers). */
    public RouteDecision route(RouteRequest proto) {
        CompletableFuture<RouteDecision> decision = new CompletableFuture<>();
        route(proto, decision::complete);
        return decision.join();
    }

    /**
     * Decides and books {@code proto}, then hands the decision to {@code done}: at once when the mode
     * needs no overlap (or the indexer's breaker is open), else on the indexer channel's I/O thread
     * once it answers or its deadline passes. Never blocks; {@code done} must not block either.
     */
    public void route(RouteRequest proto, Consumer<RouteDecision> done) {
        long start = System.nanoTime();
        RoutingRequest request = ProtoMapping.request(proto);
        String previousWorker = proto.getHintsOrDefault(PreviousWorkerHint.KEY, "");
        RoutingPolicy p = policy;
        if (!p.requires().contains(Signal.KV_OVERLAP)) {
            done.accept(decide(request, p, null, start, previousWorker));
        } else if (request.seqHashes().length == 0) {
            // a prompt shorter than one block: no worker holds any of it, which is the indexer's answer
            // without asking (a KV decision, not a degraded kv_approx one)
            done.accept(decide(request, p, Map.of(), start, previousWorker));
        } else {
            matches.findMatches(request.model(), request.blockSize(), request.seqHashes(),
                    directory.scanViews(workers -> prefillAtStakeNanos(request, workers)), answer -> {
                if (answer.isEmpty()) {
                    metrics.indexerError();
                }
                done.accept(decide(request, p, answer.orElse(null), start, previousWorker));
            });
        }
    }

    /**
     * What the indexer's answer may save: the whole prompt's prefill on the fastest worker that could serve it
     * (same model and block size, taking requests, advertising its timing); 0 when none advertises one.
     */
    static long prefillAtStakeNanos(RoutingRequest request, Iterable<WorkerView> workers) {
        double fastestMs = Double.POSITIVE_INFINITY;
        for (WorkerView w : workers) {
            if (w.acceptsRequests() && w.blockSize() == request.blockSize() && w.model().equals(request.model())
                    && w.timing().isPresent()) {
                fastestMs = Math.min(fastestMs, w.timing().get().prefillMs(request.islTokens()));
            }
        }
        return Double.isInfinite(fastestMs) ? 0 : (long) (fastestMs * 1e6);
    }

    /** @param previousWorker the worker of the conversation's previous turn (a hint judged afterwards, never obeyed), or "" */
    private RouteDecision decide(RoutingRequest request, RoutingPolicy p, Map<String, KvOverlap> matches, long start,
                                 String previousWorker) {
        List<WorkerView> workers = directory.views();
        Instant now = clock.instant();
        ClusterSnapshot snapshot = ledger.snapshotOfTiers(workers, request, p.requires(), matches, now);
        Decision d = p.decide(request, snapshot);
        ledger.book(request, d, now).ifPresent(change -> {
            publish(change);
            capacityChanged.run();
        });
        metrics.decided(d, System.nanoTime() - start);
        PreviousWorkerHint.Judged hint = PreviousWorkerHint.judge(previousWorker, matches, d);
        if (hint != null) {
            metrics.previousWorker(hint);
        }
        if (d.outcome() == Decision.Outcome.ROUTED && (!request.loraName().isEmpty() || request.tenantSalted())) {
            boolean loaded = workers.stream().filter(w -> w.id().equals(d.workerId())).findFirst()
                    .map(w -> w.adapters().hasLoaded(request.loraName())).orElse(false);
            metrics.scoped(!request.loraName().isEmpty(), loaded, request.tenantSalted());
        }
        return ProtoMapping.decision(d);
    }

    public void prefillDone(String requestId) {
        publish(ledger.prefillDone(requestId, clock.instant()));
        capacityChanged.run();
    }

    public void release(String requestId) {
        publish(ledger.release(requestId, clock.instant()));
        capacityChanged.run();
    }

    public void reportFailure(String workerId) {
        directory.markSuspect(workerId);
        metrics.workerFailureReported();
        capacityChanged.run();
    }

    public ListWorkersResponse listWorkers() {
        ListWorkersResponse.Builder b = ListWorkersResponse.newBuilder();
        for (WorkerView w : directory.views()) {
            b.addWorkers(CapacityMessages.info(w, directory.status(w.id())));
        }
        return b.build();
    }

    /** Per model, the capacity a Route would meet now (the policy's pools, load merge and busy rule). */
    public List<Capacity> capacity() {
        return policy.capacity(ledger.loadSnapshot(directory.views()));
    }

    /** {@link #capacity()} in its WatchCapacity form. */
    public List<ModelCapacity> capacityMessages() {
        return CapacityMessages.models(capacity(), directory::status);
    }

    /** Registers the one listener told about every change that may move capacity; it must not block. */
    public void onCapacityChange(Runnable listener) {
        capacityChanged = listener;
    }

    /** A membership record from flotilla.workers. */
    public void onStatus(io.flotilla.protocol.v1.WorkerStatus status) {
        if (directory.onStatus(status, clock.millis())) {
            ledger.forgetWorker(status.getWorkerId());
            capacityChanged.run();
        }
        // a changed view told the capacity listener itself; a heartbeat that changes nothing tells nobody
    }

    /** A load report from flotilla.worker-load: bookings so far are assumed to be in it. */
    public void onLoad(io.flotilla.protocol.v1.WorkerLoad load) {
        if (directory.onLoad(load) && ledger.loadReported(load.getWorkerId())) {
            capacityChanged.run(); // a changed view told it already
        }
    }

    /**
     * A change made by another router replica (own echoes are ignored by the ledger). Applied changes
     * are timed from when the other replica made them (its clock) to now.
     */
    public void onSync(RouterSync sync) {
        SequenceChange.fromProto(sync).ifPresent(c -> {
            if (ledger.applyRemote(c, clock.instant())) {
                metrics.syncApplied(clock.millis() - c.tsMillis());
                capacityChanged.run();
            }
        });
    }

    /**
     * Leases, feed health and booking expiry; called every tick. Also tells the capacity listener,
     * which catches what nothing else signals (a lease lapsing, a suspect worker answering again).
     */
    public void tick(boolean membershipFeedHealthy) {
        long now = clock.millis();
        directory.feedHealth(membershipFeedHealthy, now);
        for (String gone : directory.expire(now)) {
            ledger.forgetWorker(gone);
        }
        ledger.expire(clock.instant());
        capacityChanged.run();
    }

    public Strategy mode() {
        return policy.config().strategy();
    }

    /** Switches the routing mode at run time (benchmark comparisons, the runtime ConfigMap). */
    public synchronized void switchMode(Strategy strategy) {
        policy = new RoutingPolicy(policy.config().withStrategy(strategy), random);
    }

    /** Changes the cost formula's weights at run time (the runtime ConfigMap). */
    public synchronized void switchWeights(RouterConfig.Weights weights) {
        policy = new RoutingPolicy(policy.config().withWeights(weights), random);
    }

    /** The routing core's configuration now (mode and weights included). */
    public RouterConfig config() {
        return policy.config();
    }

    /** The worker pods that exist (the Kubernetes view): a worker without one leaves routing whatever its lease. */
    public void podsPresent(Set<String> pods) {
        for (String gone : directory.podsPresent(pods)) {
            ledger.forgetWorker(gone);
        }
        capacityChanged.run();
    }

    /** The indexer client: its breaker state and error count, for the status endpoint. */
    public IndexerClient indexer() {
        return indexer;
    }

    public WorkerDirectory directory() {
        return directory;
    }

    public BookingLedger ledger() {
        return ledger;
    }

    public String routerId() {
        return routerId;
    }

    public long syncErrors() {
        return syncErrors.get();
    }

    private void publish(SequenceChange change) {
        // captured on the Route/Release call's thread: the record carries that request's trace context
        if (change != null && !sync.offer(TracedRecord.capture(change.toProto()))) {
            syncErrors.incrementAndGet(); // Kafka has been unreachable for a while: bookings expire by TTL
        }
    }

    private void send(TracedRecord<RouterSync> change) {
        try {
            producer.send(change.toRecord(Topics.ROUTER_SYNC.name(), routerId),
                    (meta, error) -> {
                        if (error != null) {
                            syncErrors.incrementAndGet();
                        }
                    });
        } catch (RuntimeException e) {
            syncErrors.incrementAndGet(); // Kafka down: other replicas miss this change; bookings expire by TTL
        }
    }

    /** Sends the changes still queued (up to a second) and stops the sync sender. */
    @Override
    public void close() {
        sync.close();
    }
}
