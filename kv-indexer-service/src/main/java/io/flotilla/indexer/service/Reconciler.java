package io.flotilla.indexer.service;

import io.flotilla.indexer.core.ReconcileRequest;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.github.resilience4j.core.IntervalFunction;
import io.github.resilience4j.retry.Retry;
import io.github.resilience4j.retry.RetryConfig;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Carries out the applier's reconciliation decisions: fetches {@code GetKvSnapshot} from the worker
 * with bounded concurrency and a Resilience4j retry (exponential backoff with jitter), and hands the
 * answer back. At most one fetch per worker is in flight; a request for a worker already being
 * fetched is dropped (the fetch in flight answers it).
 */
public final class Reconciler implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(Reconciler.class);

    private final Function<String, String> endpointOf;
    private final Consumer<KvSnapshot> onSnapshot;
    private final Duration timeout;
    private final Retry retry;
    private final ExecutorService pool;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final AtomicLong failures = new AtomicLong();
    private final AtomicLong fetched = new AtomicLong();

    public Reconciler(Function<String, String> endpointOf, Consumer<KvSnapshot> onSnapshot, int concurrency,
                      Duration timeout, int attempts) {
        this.endpointOf = endpointOf;
        this.onSnapshot = onSnapshot;
        this.timeout = timeout;
        this.retry = Retry.of("worker-snapshot", RetryConfig.custom()
                .maxAttempts(attempts)
                .intervalFunction(IntervalFunction.ofExponentialRandomBackoff(Duration.ofMillis(200), 2.0, 0.5))
                .build());
        this.pool = Executors.newFixedThreadPool(concurrency, r -> {
            Thread t = new Thread(r, "reconcile");
            t.setDaemon(true);
            return t;
        });
    }

    public void submit(ReconcileRequest request) {
        if (!inFlight.add(request.workerId())) {
            return;
        }
        pool.execute(() -> {
            try {
                String endpoint = endpointOf.apply(request.workerId());
                if (endpoint == null || endpoint.isBlank()) {
                    failures.incrementAndGet();
                    log.warn("cannot reconcile {}: no endpoint known yet (will retry on the next tick)", request.workerId());
                    return;
                }
                KvSnapshot snapshot = retry.executeSupplier(() -> stub(endpoint)
                        .withDeadlineAfter(timeout.toMillis(), TimeUnit.MILLISECONDS)
                        .getKvSnapshot(KvSnapshotRequest.getDefaultInstance()));
                fetched.incrementAndGet();
                onSnapshot.accept(snapshot);
            } catch (RuntimeException e) {
                failures.incrementAndGet();
                log.warn("reconciliation of {} ({}) failed after retries: {}", request.workerId(), request.reason(), e.toString());
            } finally {
                inFlight.remove(request.workerId());
            }
        });
    }

    public long failures() {
        return failures.get();
    }

    public long fetched() {
        return fetched.get();
    }

    private WorkerServiceGrpc.WorkerServiceBlockingStub stub(String endpoint) {
        ManagedChannel ch = channels.computeIfAbsent(endpoint,
                e -> NettyChannelBuilder.forTarget(e).usePlaintext().maxInboundMessageSize(256 << 20).build());
        return WorkerServiceGrpc.newBlockingStub(ch);
    }

    @Override
    public void close() {
        pool.shutdownNow();
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
