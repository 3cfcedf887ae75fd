package io.flotilla.router.client;

import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.WorkerMatch;
import io.flotilla.router.core.KvOverlap;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * Asks the kv-indexer how many leading blocks of a prompt each worker holds. Every call has a
 * deadline (default 10 ms) and goes through a circuit breaker, so a slow or dead indexer costs the
 * request path at most one deadline and then nothing until the breaker half-opens. An empty answer
 * means "no overlap data": the router degrades, it never fails the request.
 *
 * <p>{@link #findMatches(String, int, long[], Consumer)} does not block: the answer is handled on
 * the channel's I/O thread ({@code directExecutor}), so a Route costs no thread hand-off for the
 * indexer's answer and holds no thread while it waits. Callers must not block in the callback.
 */
public final class IndexerClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final IndexerServiceGrpc.IndexerServiceBlockingStub stub;
    private final IndexerServiceGrpc.IndexerServiceStub async;
    private final Duration deadline;
    private final CircuitBreaker breaker;
    private final AtomicLong errors = new AtomicLong();

    public IndexerClient(String address, Duration deadline) {
        this.channel = NettyChannelBuilder.forTarget(address).usePlaintext().directExecutor().build();
        this.stub = IndexerServiceGrpc.newBlockingStub(channel);
        this.async = IndexerServiceGrpc.newStub(channel);
        channel.getState(true); // connect now: the first FindMatches must not pay the connection setup
        this.deadline = deadline;
        this.breaker = CircuitBreaker.of("indexer", CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(20)
                .minimumNumberOfCalls(5)
                .failureRateThreshold(50)
                .slowCallDurationThreshold(deadline)
                .slowCallRateThreshold(80)
                .waitDurationInOpenState(Duration.ofSeconds(2))
                .permittedNumberOfCallsInHalfOpenState(3)
                .build());
    }

    /** The prefix each worker holds per tier, or empty when the indexer did not answer in time (blocking). */
    public Optional<Map<String, KvOverlap>> findMatches(String model, int blockSize, long[] seqHashes) {
        CompletableFuture<Optional<Map<String, KvOverlap>>> answer = new CompletableFuture<>();
        findMatches(model, blockSize, seqHashes, answer::complete);
        return answer.join();
    }

    /**
     * Hands {@code done} the matched leading blocks per worker, or empty when the breaker is open or
     * the indexer did not answer within the deadline. {@code done} runs exactly once: on this thread
     * when the breaker refuses the call, else on the channel's I/O thread.
     */
    public void findMatches(String model, int blockSize, long[] seqHashes, Consumer<Optional<Map<String, KvOverlap>>> done) {
        if (!breaker.tryAcquirePermission()) {
            done.accept(Optional.empty()); // breaker open: do not even try
            return;
        }
        FindMatchesRequest.Builder req = FindMatchesRequest.newBuilder().setModel(model).setBlockSize(blockSize);
        for (long h : seqHashes) {
            req.addSeqHashes(h);
        }
        long start = System.nanoTime();
        async.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS).findMatches(req.build(), new StreamObserver<>() {
            private FindMatchesResponse response;

            @Override
            public void onNext(FindMatchesResponse value) {
                response = value;
            }

            @Override
            public void onError(Throwable t) {
                errors.incrementAndGet();
                breaker.onError(System.nanoTime() - start, TimeUnit.NANOSECONDS, t);
                done.accept(Optional.empty());
            }

            @Override
            public void onCompleted() {
                breaker.onSuccess(System.nanoTime() - start, TimeUnit.NANOSECONDS);
                Map<String, KvOverlap> out = new HashMap<>();
                for (WorkerMatch m : response.getMatchesList()) {
                    out.put(m.getWorkerId(), overlapOf(m));
                }
                done.accept(Optional.of(out));
            }
        });
    }

    /** A match as tiers; an indexer without tiers answers the device prefix only. */
    static KvOverlap overlapOf(WorkerMatch m) {
        int any = m.getPrefixDeviceBlocks() + m.getPrefixHostBlocks() + m.getPrefixDiskBlocks();
        if (any < m.getMatchedBlocks()) {
            return KvOverlap.deviceOnly(m.getMatchedBlocks());
        }
        return new KvOverlap(m.getMatchedBlocks(), m.getPrefixDeviceBlocks(), m.getPrefixHostBlocks(), m.getPrefixDiskBlocks());
    }

    /**
     * Keeps the path to the indexer warm: one small query a second, outside the breaker and with a
     * generous deadline. On a cold or loaded machine the first calls (connection setup, JIT on both
     * sides) take longer than the request-path deadline; without traffic that reaches the indexer
     * the breaker would keep the path cold and the router in approximate mode.
     */
    public void keepWarm() {
        FindMatchesRequest.Builder req = FindMatchesRequest.newBuilder().setModel("").setBlockSize(0);
        for (int i = 0; i < 64; i++) {
            req.addSeqHashes(i * 0x9E3779B97F4A7C15L);
        }
        try {
            stub.withDeadlineAfter(1, TimeUnit.SECONDS).findMatches(req.build());
        } catch (StatusRuntimeException ignored) {
            // the indexer is down; request-path calls find that out through the breaker
        }
    }

    /** Calls that failed or timed out (not counting those the open breaker skipped). */
    public long errors() {
        return errors.get();
    }

    public CircuitBreaker.State breakerState() {
        return breaker.getState();
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
