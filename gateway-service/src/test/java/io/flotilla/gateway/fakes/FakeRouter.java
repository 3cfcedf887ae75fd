package io.flotilla.gateway.fakes;

import io.flotilla.protocol.v1.Ack;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WorkerFailure;
import io.flotilla.protocol.v1.WorkerInfo;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * RouterService for tests: answers Route with a configurable decision function, ListWorkers with a
 * fixed worker list, and records every call.
 */
public final class FakeRouter extends RouterServiceGrpc.RouterServiceImplBase {

    private final List<WorkerInfo> workers;
    private volatile Function<RouteRequest, RouteDecision> decide;
    public final List<RouteRequest> routes = new CopyOnWriteArrayList<>();
    public final List<String> releases = new CopyOnWriteArrayList<>();
    public final List<String> prefillDone = new CopyOnWriteArrayList<>();
    public final List<WorkerFailure> failures = new CopyOnWriteArrayList<>();

    public FakeRouter(List<WorkerInfo> workers, Function<RouteRequest, RouteDecision> decide) {
        this.workers = List.copyOf(workers);
        this.decide = decide;
    }

    public void decide(Function<RouteRequest, RouteDecision> decide) {
        this.decide = decide;
    }

    public void clearRecords() {
        routes.clear();
        releases.clear();
        prefillDone.clear();
        failures.clear();
    }

    /** Route calls of one request, in order. */
    public List<RouteRequest> routesOf(String requestId) {
        return routes.stream().filter(r -> r.getRequestId().equals(requestId)).toList();
    }

    @Override
    public void route(RouteRequest request, StreamObserver<RouteDecision> observer) {
        routes.add(request);
        try {
            observer.onNext(decide.apply(request));
            observer.onCompleted();
        } catch (StatusRuntimeException e) {
            observer.onError(e);
        }
    }

    @Override
    public void release(RequestRef request, StreamObserver<Ack> observer) {
        releases.add(request.getRequestId());
        ack(observer);
    }

    @Override
    public void markPrefillDone(RequestRef request, StreamObserver<Ack> observer) {
        prefillDone.add(request.getRequestId());
        ack(observer);
    }

    @Override
    public void reportWorkerFailure(WorkerFailure request, StreamObserver<Ack> observer) {
        failures.add(request);
        ack(observer);
    }

    @Override
    public void listWorkers(ListWorkersRequest request, StreamObserver<ListWorkersResponse> observer) {
        observer.onNext(ListWorkersResponse.newBuilder().addAllWorkers(workers).build());
        observer.onCompleted();
    }

    private static void ack(StreamObserver<Ack> observer) {
        observer.onNext(Ack.getDefaultInstance());
        observer.onCompleted();
    }
}
