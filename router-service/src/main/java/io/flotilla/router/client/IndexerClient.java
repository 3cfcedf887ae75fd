package io.flotilla.router.client;

import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.WorkerMatch;
import io.flotilla.router.core.KvOverlap;
import io.github.resilience4j.circuitbreaker.CircuitBreaker;
import io.github.resilience4j.circuitbreaker.CircuitBreakerConfig;
import io.github.resilience4j.micrometer.tagged.TaggedCircuitBreakerMetricsPublisher;
import io.flotilla.protocol.grpc.SharedEventLoop;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.grpc.Status;
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
 * deadline sized from the calls' recent latency ({@link DeadlineEstimator}: a multiple of the tail,
 * between a floor and a ceiling) and goes through a circuit breaker, so a slow or dead indexer costs
 * the request path at most one deadline and then nothing until the breaker half-opens. An empty
 * answer means "no overlap data": the router degrades, it never fails the request.
 *
 * <p>{@link #findMatches(String, int, long[], Consumer)} does not block: the answer is handled on
 * the channel's I/O thread ({@code directExecutor}), so a Route costs no thread hand-off for the
 * indexer's answer and holds no thread while it waits. Callers must not block in the callback.
 */
public final class IndexerClient implements KvMatches, AutoCloseable {

    /** At debug level every call is logged with its latency: the raw material for sizing the deadline. */
    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(IndexerClient.class);

    private final ManagedChannel channel;
    private final IndexerServiceGrpc.IndexerServiceBlockingStub stub;
    private final IndexerServiceGrpc.IndexerServiceStub async;
    private final DeadlineEstimator deadline;
    private final CircuitBreaker breaker;
    private final AtomicLong errors = new AtomicLong();
    private final AtomicLong missed = new AtomicLong();

    private final Timer latency;
    private final String address;

    /**
     * One indexer's answer: the matched prefix per worker, and which workers it covers: those of {@code partitions}
     * of flotilla.kv-events' {@code partitionCount} (an indexer shard), or every worker ({@code partitionCount} 0).
     */
    public record Answer(Map<String, KvOverlap> matches, java.util.List<Integer> partitions, int partitionCount) {

        public Answer {
            matches = Map.copyOf(matches);
            partitions = java.util.List.copyOf(partitions);
        }

        public boolean coversEveryWorker() {
            return partitionCount <= 0;
        }
    }

    /** A client with a fixed deadline and metrics nobody reads. */
    public IndexerClient(String address, Duration deadline) {
        this(address, new DeadlineEstimator(DeadlineEstimator.Settings.fixed(deadline)), new SimpleMeterRegistry());
    }

    public IndexerClient(String address, DeadlineEstimator deadline, MeterRegistry registry) {
        this(address, deadline, registry, null);
    }

    /**
     * @param registry gets {@code flotilla.router.indexer.latency}: the answered calls, as the router waited for them
     * @param loop     the I/O thread the channel runs on (the router's gRPC server's, so a Route's indexer call
     *                 and its answer never change threads); null for gRPC's shared default
     */
    public IndexerClient(String address, DeadlineEstimator deadline, MeterRegistry registry, SharedEventLoop loop) {
        this(address, deadline, registry, loop, java.util.List.of());
    }

    /** @param interceptors run on every call (the router's observation interceptor: trace context and grpc.client metrics) */
    public IndexerClient(String address, DeadlineEstimator deadline, MeterRegistry registry, SharedEventLoop loop,
                         java.util.List<ClientInterceptor> interceptors) {
        this("indexer", address, deadline, registry, loop, interceptors);
    }

    /**
     * @param name the breaker's name ({@code resilience4j_circuitbreaker_*{name}}): {@code indexer} for the one
     *             indexer, one name per shard when there are several
     */
    public IndexerClient(String name, String address, DeadlineEstimator deadline, MeterRegistry registry,
                         SharedEventLoop loop, java.util.List<ClientInterceptor> interceptors) {
        this.address = address;
        this.latency = Timer.builder("flotilla.router.indexer.latency")
                .description("FindMatches calls answered in time, from sent to answer handled (the router's side)")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(50_000))
                .maximumExpectedValue(Duration.ofSeconds(1)).register(registry);
        NettyChannelBuilder builder = NettyChannelBuilder.forTarget(address).usePlaintext().directExecutor()
                .intercept(interceptors);
        this.channel = (loop == null ? builder : loop.connect(builder)).build();
        this.stub = IndexerServiceGrpc.newBlockingStub(channel);
        this.async = IndexerServiceGrpc.newStub(channel);
        channel.getState(true); // connect now: the first FindMatches must not pay the connection setup
        this.deadline = deadline;
        // The breaker is for an indexer that does not answer, not for one that is sometimes late: while
        // more than one call in five is answered in time, asking is worth its deadline (at 50 % it opened
        // on the misses of a cold start and threw away the answers of the calls it then skipped).
        // A late call already fails (DEADLINE_EXCEEDED), so no answered call counts as slow: resilience4j's
        // defaults (60 s, 100 %) stand. A slow-call rule at the deadline's ceiling opened the breaker in the first
        // seconds of a Mooncake run on a fresh cluster although the indexer had answered in time: the time it
        // measures ends when this router's event loop runs the callback, which a cold, busy router does late,
        // and the breaker then threw away nine decisions' answers (kv_approx) against six real misses.
        this.breaker = CircuitBreaker.of(name, CircuitBreakerConfig.custom()
                .slidingWindowType(CircuitBreakerConfig.SlidingWindowType.COUNT_BASED)
                .slidingWindowSize(20)
                .minimumNumberOfCalls(5)
                .failureRateThreshold(80)
                .waitDurationInOpenState(Duration.ofSeconds(2))
                .permittedNumberOfCallsInHalfOpenState(3)
                .build());
        // state and calls as resilience4j_circuitbreaker_* {name="indexer"}
        new TaggedCircuitBreakerMetricsPublisher(registry).publishMetrics(breaker);
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
    @Override
    public void findMatches(String model, int blockSize, long[] seqHashes, long prefillNanos,
                            Consumer<Optional<Map<String, KvOverlap>>> done) {
        ask(model, blockSize, seqHashes, prefillNanos, answer -> done.accept(answer.map(Answer::matches)));
    }

    /**
     * As {@link #findMatches(String, int, long[], Consumer)}, with the workers the answer covers (an indexer shard
     * names its partitions).
     */
    public void ask(String model, int blockSize, long[] seqHashes, Consumer<Optional<Answer>> done) {
        ask(model, blockSize, seqHashes, 0, done);
    }

    /** As {@link #ask(String, int, long[], Consumer)}, the call's time budget staked on the prompt's prefill. */
    public void ask(String model, int blockSize, long[] seqHashes, long prefillNanos, Consumer<Optional<Answer>> done) {
        if (!breaker.tryAcquirePermission()) {
            done.accept(Optional.empty()); // breaker open: do not even try
            return;
        }
        FindMatchesRequest.Builder req = FindMatchesRequest.newBuilder().setModel(model).setBlockSize(blockSize);
        for (long h : seqHashes) {
            req.addSeqHashes(h);
        }
        long start = System.nanoTime();
        long budget = deadline.budgetNanos(prefillNanos);
        async.withDeadlineAfter(budget, TimeUnit.NANOSECONDS).findMatches(req.build(), new StreamObserver<>() {
            private FindMatchesResponse response;

            @Override
            public void onNext(FindMatchesResponse value) {
                response = value;
            }

            @Override
            public void onError(Throwable t) {
                long took = System.nanoTime() - start;
                errors.incrementAndGet();
                if (log.isDebugEnabled()) {
                    log.debug("FindMatches of {} blocks failed after {} µs (deadline {} µs): {}", seqHashes.length,
                            took / 1000, budget / 1000, Status.fromThrowable(t));
                }
                if (Status.fromThrowable(t).getCode() == Status.Code.DEADLINE_EXCEEDED) {
                    missed.incrementAndGet();
                    deadline.record(Math.max(took, budget)); // censored: it took at least its deadline
                }
                breaker.onError(took, TimeUnit.NANOSECONDS, t);
                done.accept(Optional.empty());
            }

            @Override
            public void onCompleted() {
                long took = System.nanoTime() - start;
                deadline.record(took);
                latency.record(took, TimeUnit.NANOSECONDS);
                if (log.isDebugEnabled()) {
                    log.debug("FindMatches of {} blocks answered in {} µs (deadline {} µs)", seqHashes.length, took / 1000,
                            budget / 1000);
                }
                breaker.onSuccess(took, TimeUnit.NANOSECONDS);
                Map<String, KvOverlap> out = new HashMap<>();
                for (WorkerMatch m : response.getMatchesList()) {
                    out.put(m.getWorkerId(), overlapOf(m));
                }
                done.accept(Optional.of(new Answer(out, response.getPartitionsList(), response.getPartitionCount())));
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

    /** The indexer's host:port. */
    public String address() {
        return address;
    }

    /** Calls that failed or timed out (not counting those the open breaker skipped). */
    public long errors() {
        return errors.get();
    }

    /** Calls that missed their deadline (included in {@link #errors()}). */
    public long missedDeadlines() {
        return missed.get();
    }

    /** The deadline and the measured tail of the calls. */
    public DeadlineEstimator deadline() {
        return deadline;
    }

    public CircuitBreaker.State breakerState() {
        return breaker.getState();
    }

    @Override
    public void close() {
        channel.shutdownNow();
    }
}
