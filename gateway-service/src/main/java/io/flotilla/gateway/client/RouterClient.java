package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.Ack;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.flotilla.protocol.v1.WorkerFailure;
import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

/**
 * RouterService of one or more router replicas, one channel each ({@code flotilla.gateway.router-address}
 * is a comma-separated list; a {@code dns:///} target resolving to several replicas is one channel that
 * balances over them itself).
 *
 * <p>{@code Route} calls start at the next replica in rotation, preferring replicas whose channel is
 * not failing, and move to the next one within the same call when a replica is unreachable or misses
 * its deadline (the {@link RouteDeadline}, sized from measured latency); with one replica, an
 * unreachable one is tried once more (a reconnect). When every attempt failed the call ends with
 * {@link RouteFailed} and the gateway picks a worker itself; a repeated Route of the same request id
 * replaces its booking on that replica, and every replica the call touched is released at the end.
 *
 * <p>Bookkeeping calls (Release, MarkPrefillDone, ReportWorkerFailure) never fail the request: their
 * errors are logged and swallowed, since routers also expire bookings on their own.
 */
public final class RouterClient {

    private static final Logger log = LoggerFactory.getLogger(RouterClient.class);

    /** What a Route attempt came to, for metrics. */
    public enum RouteOutcome { ANSWERED, TIMEOUT, UNAVAILABLE, ERROR }

    /** Told about every Route attempt. */
    public interface RouteObserver {
        void attempt(int router, RouteOutcome outcome, long nanos);
    }

    private final List<ManagedChannel> channels;
    private final RouteDeadline deadline;
    private final Duration callTimeout;
    private final RouteObserver observer;
    private final AtomicInteger next = new AtomicInteger();
    private final List<Consumer<ListWorkersResponse>> workerListeners = new ArrayList<>();

    public RouterClient(List<ManagedChannel> channels, RouteDeadline deadline, Duration callTimeout, RouteObserver observer) {
        if (channels.isEmpty()) {
            throw new IllegalArgumentException("at least one router channel");
        }
        this.channels = List.copyOf(channels);
        this.deadline = deadline;
        this.callTimeout = callTimeout;
        this.observer = observer;
        channels.forEach(c -> c.getState(true)); // connect now, not on the first request
    }

    public int routers() {
        return channels.size();
    }

    /** The deadline the next Route attempt gets. */
    public Duration routeDeadline() {
        return deadline.current();
    }

    /** Also tells {@code listener} every ListWorkers answer (the fallback's worker list without a capacity stream). */
    public synchronized void onWorkerList(Consumer<ListWorkersResponse> listener) {
        workerListeners.add(listener);
    }

    /**
     * One Route with failover; errors with {@link RouteFailed} when no replica answered, or with the
     * router's own status when it refused the request ({@code INVALID_ARGUMENT}).
     */
    public Mono<RouterAnswer> route(RouteRequest request) {
        return Mono.defer(() -> {
            List<Integer> order = order();
            int attempts = channels.size() == 1 ? 2 : channels.size();
            return attempt(request, order, 0, attempts, new HashSet<>());
        });
    }

    private Mono<RouterAnswer> attempt(RouteRequest request, List<Integer> order, int i, int attempts, Set<Integer> touched) {
        int router = order.get(i % order.size());
        Duration d = deadline.current();
        long start = System.nanoTime();
        Set<Integer> reached = new HashSet<>(touched);
        reached.add(router);
        return GrpcCalls.unary(channels.get(router), RouterServiceGrpc.getRouteMethod(), request, d)
                .map(decision -> {
                    long nanos = System.nanoTime() - start;
                    deadline.answered(nanos);
                    observer.attempt(router, RouteOutcome.ANSWERED, nanos);
                    return new RouterAnswer(decision, router, Set.copyOf(reached));
                })
                .onErrorResume(e -> !(e instanceof RouteFailed), e -> {
                    long nanos = System.nanoTime() - start;
                    Status.Code code = Status.fromThrowable(e).getCode();
                    if (code == Status.Code.INVALID_ARGUMENT) {
                        observer.attempt(router, RouteOutcome.ERROR, nanos);
                        return Mono.error(e);
                    }
                    boolean timeout = code == Status.Code.DEADLINE_EXCEEDED;
                    if (timeout) {
                        deadline.timedOut(d);
                    }
                    observer.attempt(router, timeout ? RouteOutcome.TIMEOUT
                            : code == Status.Code.UNAVAILABLE ? RouteOutcome.UNAVAILABLE : RouteOutcome.ERROR, nanos);
                    boolean retrySame = channels.size() == 1 && code == Status.Code.UNAVAILABLE;
                    if (i + 1 < attempts && (channels.size() > 1 || retrySame)) {
                        return attempt(request, order, i + 1, attempts, reached);
                    }
                    return Mono.error(new RouteFailed("no router answered Route for " + request.getRequestId() + " ("
                            + code + (timeout ? " after " + d.toMillis() + " ms" : "") + ")", e, reached));
                });
    }

    /** Replicas from the next in rotation, those whose channel is not failing first. */
    private List<Integer> order() {
        int n = channels.size();
        int first = Math.floorMod(next.getAndIncrement(), n);
        List<Integer> healthy = new ArrayList<>(n);
        List<Integer> failing = new ArrayList<>(1);
        for (int k = 0; k < n; k++) {
            int r = (first + k) % n;
            (channels.get(r).getState(false) == ConnectivityState.TRANSIENT_FAILURE ? failing : healthy).add(r);
        }
        healthy.addAll(failing);
        return healthy;
    }

    /** The worker list of the first replica that answers. */
    public Mono<ListWorkersResponse> listWorkers() {
        return Mono.defer(() -> listWorkers(order(), 0)).doOnNext(response -> {
            List<Consumer<ListWorkersResponse>> listeners;
            synchronized (this) {
                listeners = List.copyOf(workerListeners);
            }
            listeners.forEach(l -> l.accept(response));
        });
    }

    private Mono<ListWorkersResponse> listWorkers(List<Integer> order, int i) {
        return GrpcCalls.unary(channels.get(order.get(i)), RouterServiceGrpc.getListWorkersMethod(),
                        ListWorkersRequest.getDefaultInstance(), callTimeout)
                .onErrorResume(e -> i + 1 < order.size(), e -> listWorkers(order, i + 1));
    }

    /** The capacity stream of replica {@code router}; no deadline (it lives as long as the replica). */
    public Flux<CapacityUpdate> watchCapacity(int router, WatchCapacityRequest request) {
        return Flux.defer(() -> GrpcCalls.serverStreaming(channels.get(router), RouterServiceGrpc.getWatchCapacityMethod(),
                request, null));
    }

    /** Frees the booking of {@code requestId} on each of {@code routers}; completes empty even when they are unreachable. */
    public Mono<Void> release(String requestId, Set<Integer> routers) {
        RequestRef ref = RequestRef.newBuilder().setRequestId(requestId).build();
        return Flux.fromIterable(routers)
                .flatMap(r -> bookkeeping("Release " + requestId, GrpcCalls.unary(channels.get(r),
                        RouterServiceGrpc.getReleaseMethod(), ref, callTimeout)))
                .then();
    }

    public Mono<Void> markPrefillDone(String requestId, int router) {
        return bookkeeping("MarkPrefillDone " + requestId, GrpcCalls.unary(channels.get(router),
                RouterServiceGrpc.getMarkPrefillDoneMethod(), RequestRef.newBuilder().setRequestId(requestId).build(),
                callTimeout));
    }

    /** Tells every replica: a suspect flag is each replica's own. */
    public Mono<Void> reportWorkerFailure(String workerId, String reason) {
        WorkerFailure failure = WorkerFailure.newBuilder().setWorkerId(workerId).setReason(reason).build();
        return Flux.range(0, channels.size())
                .flatMap(r -> bookkeeping("ReportWorkerFailure " + workerId, GrpcCalls.unary(channels.get(r),
                        RouterServiceGrpc.getReportWorkerFailureMethod(), failure, callTimeout)))
                .then();
    }

    private static Mono<Void> bookkeeping(String what, Mono<Ack> call) {
        return call.then().onErrorResume(e -> {
            log.warn("router call {} failed: {}", what, e.toString());
            return Mono.empty();
        });
    }
}
