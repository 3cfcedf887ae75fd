package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.Ack;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerFailure;
import io.grpc.ManagedChannel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

import java.time.Duration;

/**
 * The router's RouterService over one channel. {@code Route} has its own short deadline (it is on
 * every request's critical path); the other calls share {@code callTimeout}. Bookkeeping calls
 * (Release, MarkPrefillDone, ReportWorkerFailure) never fail the request: their errors are logged
 * and swallowed, since the router also expires bookings on its own.
 */
public final class RouterClient {

    private static final Logger log = LoggerFactory.getLogger(RouterClient.class);

    private final ManagedChannel channel;
    private final Duration routeTimeout;
    private final Duration callTimeout;

    public RouterClient(ManagedChannel channel, Duration routeTimeout, Duration callTimeout) {
        this.channel = channel;
        this.routeTimeout = routeTimeout;
        this.callTimeout = callTimeout;
        channel.getState(true); // connect now, not on the first request
    }

    /**
     * Routes with one retry when the router did not answer in time or was unreachable (a cold JVM, a
     * reconnect): a repeated Route of the same request id replaces its booking, it does not add one.
     */
    public Mono<RouteDecision> route(RouteRequest request) {
        return Mono.defer(() -> GrpcCalls.unary(channel, RouterServiceGrpc.getRouteMethod(), request, routeTimeout))
                .retryWhen(reactor.util.retry.Retry.max(1).filter(RouterClient::transientFailure));
    }

    private static boolean transientFailure(Throwable e) {
        io.grpc.Status.Code code = io.grpc.Status.fromThrowable(e).getCode();
        return code == io.grpc.Status.Code.DEADLINE_EXCEEDED || code == io.grpc.Status.Code.UNAVAILABLE;
    }

    public Mono<ListWorkersResponse> listWorkers() {
        return GrpcCalls.unary(channel, RouterServiceGrpc.getListWorkersMethod(), ListWorkersRequest.getDefaultInstance(),
                callTimeout);
    }

    /** Frees the router's booking of {@code requestId}; completes empty even when the router is unreachable. */
    public Mono<Void> release(String requestId) {
        return bookkeeping("Release " + requestId, GrpcCalls.unary(channel, RouterServiceGrpc.getReleaseMethod(),
                RequestRef.newBuilder().setRequestId(requestId).build(), callTimeout));
    }

    public Mono<Void> markPrefillDone(String requestId) {
        return bookkeeping("MarkPrefillDone " + requestId, GrpcCalls.unary(channel,
                RouterServiceGrpc.getMarkPrefillDoneMethod(), RequestRef.newBuilder().setRequestId(requestId).build(),
                callTimeout));
    }

    public Mono<Void> reportWorkerFailure(String workerId, String reason) {
        return bookkeeping("ReportWorkerFailure " + workerId, GrpcCalls.unary(channel,
                RouterServiceGrpc.getReportWorkerFailureMethod(),
                WorkerFailure.newBuilder().setWorkerId(workerId).setReason(reason).build(), callTimeout));
    }

    private static Mono<Void> bookkeeping(String what, Mono<Ack> call) {
        return call.then().onErrorResume(e -> {
            log.warn("router call {} failed: {}", what, e.toString());
            return Mono.empty();
        });
    }
}
