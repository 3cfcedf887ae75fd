package io.flotilla.router.client;

import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.WorkerMatch;
import io.github.resilience4j.circuitbreaker.CallNotPermittedException;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Asks the kv-indexer how many leading blocks of a prompt each worker holds. Every call has a
 * deadline (default 10 ms) and goes through a circuit breaker, so a slow or dead indexer costs the
 * request path at most one deadline and then nothing until the breaker half-opens. An empty answer
 * means "no overlap data": the router degrades, it never fails the request.
 */
public final class IndexerClient implements AutoCloseable {

    private final ManagedChannel channel;
    private final IndexerServiceGrpc.IndexerServiceBlockingStub stub;
    private final Duration deadline;
    private final CircuitBreaker breaker;
    private final AtomicLong errors = new AtomicLong();

    public IndexerClient(String address, Duration deadline) {
        this.channel = NettyChannelBuilder.forTarget(address).usePlaintext().build();
        this.stub = IndexerServiceGrpc.newBlockingStub(channel);
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

    /** Matched leading blocks per worker, or empty when the indexer did not answer in time. */
    public Optional<Map<String, Integer>> findMatches(String model, int blockSize, long[] seqHashes) {
        FindMatchesRequest.Builder req = FindMatchesRequest.newBuilder().setModel(model).setBlockSize(blockSize);
        for (long h : seqHashes) {
            req.addSeqHashes(h);
        }
        try {
            FindMatchesResponse resp = breaker.executeSupplier(() ->
                    stub.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS).findMatches(req.build()));
            Map<String, Integer> out = new HashMap<>();
            for (WorkerMatch m : resp.getMatchesList()) {
                out.put(m.getWorkerId(), m.getMatchedBlocks());
            }
            return Optional.of(out);
        } catch (CallNotPermittedException e) {
            return Optional.empty(); // breaker open: do not even try
        } catch (StatusRuntimeException e) {
            errors.incrementAndGet();
            return Optional.empty();
        }
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
