package io.flotilla.router.service;

import io.flotilla.protocol.kafka.Topics;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterSync;
import io.flotilla.router.client.IndexerClient;
import io.flotilla.router.cluster.WorkerDirectory;
import io.flotilla.router.core.BookingLedger;
import io.flotilla.router.core.ClusterSnapshot;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.RoutingPolicy;
import io.flotilla.router.core.RoutingRequest;
import io.flotilla.router.core.SequenceChange;
import io.flotilla.router.core.Signal;
import io.flotilla.router.core.Strategy;
import io.flotilla.router.core.WorkerView;
import org.apache.kafka.clients.producer.Producer;
import org.apache.kafka.clients.producer.ProducerRecord;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.random.RandomGenerator;

/**
 * The router's request path: membership + overlap in, a decision out, booking after. Deciding is
 * {@link RoutingPolicy#decide} (pure); every state change goes through the {@link BookingLedger} and
 * is shared with other router replicas over {@code flotilla.router-sync}.
 */
public final class RouterEngine {

    private final WorkerDirectory directory;
    private final BookingLedger ledger;
    private final IndexerClient indexer;
    private final Producer<String, Object> producer;
    private final RouterMetrics metrics;
    private final Clock clock;
    private final RandomGenerator random;
    private final String routerId;
    private final AtomicLong syncErrors = new AtomicLong();
    private volatile RoutingPolicy policy;

    public RouterEngine(RouterConfig config, WorkerDirectory directory, BookingLedger ledger, IndexerClient indexer,
                        Producer<String, Object> producer, RouterMetrics metrics, Clock clock, RandomGenerator random,
                        String routerId) {
        this.directory = directory;
        this.ledger = ledger;
        this.indexer = indexer;
        this.producer = producer;
        this.metrics = metrics;
        this.clock = clock;
        this.random = random;
        this.routerId = routerId;
        this.policy = new RoutingPolicy(config, random);
    }

    public RouteDecision route(RouteRequest proto) {
        long start = System.nanoTime();
        RoutingRequest request = RoutingRequest.fromProto(proto);
        RoutingPolicy p = policy;
        Set<Signal> required = p.requires();
        Map<String, Integer> matches = null;
        if (required.contains(Signal.KV_OVERLAP) && request.seqHashes().length > 0) {
            matches = indexer.findMatches(request.model(), request.blockSize(), request.seqHashes()).orElse(null);
            if (matches == null) {
                metrics.indexerError();
            }
        }
        List<WorkerView> workers = directory.views();
        Instant now = clock.instant();
        ClusterSnapshot snapshot = ledger.snapshot(workers, request, required, matches, now);
        Decision d = p.decide(request, snapshot);
        ledger.book(request, d, now).ifPresent(this::publish);
        metrics.decided(d, System.nanoTime() - start);
        return d.toProto();
    }

    public void prefillDone(String requestId) {
        publish(ledger.prefillDone(requestId, clock.instant()));
    }

    public void release(String requestId) {
        publish(ledger.release(requestId, clock.instant()));
    }

    public void reportFailure(String workerId) {
        directory.markSuspect(workerId);
        metrics.workerFailureReported();
    }

    public ListWorkersResponse listWorkers() {
        ListWorkersResponse.Builder b = ListWorkersResponse.newBuilder();
        for (WorkerView w : directory.views()) {
            b.addWorkersBuilder().setWorkerId(w.id()).setModel(w.model()).setRole(w.role()).setState(w.state())
                    .setEndpoint(w.endpoint()).setBlockSize(w.blockSize()).setRoutable(w.acceptsRequests());
        }
        return b.build();
    }

    /** A membership record from flotilla.workers. */
    public void onStatus(io.flotilla.protocol.v1.WorkerStatus status) {
        if (directory.onStatus(status, clock.millis())) {
            ledger.forgetWorker(status.getWorkerId());
        }
    }

    /** A load report from flotilla.worker-load: bookings so far are assumed to be in it. */
    public void onLoad(io.flotilla.protocol.v1.WorkerLoad load) {
        if (directory.onLoad(load)) {
            ledger.loadReported(load.getWorkerId());
        }
    }

    /** A change made by another router replica (own echoes are ignored by the ledger). */
    public void onSync(RouterSync sync) {
        SequenceChange.fromProto(sync).ifPresent(c -> ledger.applyRemote(c, clock.instant()));
    }

    /** Leases, feed health and booking expiry; called every tick. */
    public void tick(boolean membershipFeedHealthy) {
        long now = clock.millis();
        directory.feedHealth(membershipFeedHealthy, now);
        for (String gone : directory.expire(now)) {
            ledger.forgetWorker(gone);
        }
        ledger.expire(clock.instant());
    }

    public Strategy mode() {
        return policy.config().strategy();
    }

    /** Switches the routing mode at run time (benchmark comparisons use it). */
    public void switchMode(Strategy strategy) {
        policy = new RoutingPolicy(policy.config().withStrategy(strategy), random);
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
        if (change == null) {
            return;
        }
        try {
            producer.send(new ProducerRecord<>(Topics.ROUTER_SYNC.name(), routerId, change.toProto()),
                    (meta, error) -> {
                        if (error != null) {
                            syncErrors.incrementAndGet();
                        }
                    });
        } catch (RuntimeException e) {
            syncErrors.incrementAndGet(); // Kafka down: other replicas miss this change; bookings expire by TTL
        }
    }
}
