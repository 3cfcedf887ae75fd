package io.flotilla.gateway.fakes;

import io.flotilla.protocol.v1.Ack;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.flotilla.protocol.v1.WorkerHeadroom;
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
 * fixed worker list, WatchCapacity with the current capacity (every model unsaturated, every worker
 * idle, unless a test {@link #pushCapacity pushes} another), and records every call.
 */
public final class FakeRouter extends RouterServiceGrpc.RouterServiceImplBase {

    private volatile List<WorkerInfo> workers;
    private volatile Function<RouteRequest, RouteDecision> decide;
    public final List<RouteRequest> routes = new CopyOnWriteArrayList<>();
    public final List<String> releases = new CopyOnWriteArrayList<>();
    public final List<String> prefillDone = new CopyOnWriteArrayList<>();
    public final List<WorkerFailure> failures = new CopyOnWriteArrayList<>();
    private final List<StreamObserver<CapacityUpdate>> watchers = new CopyOnWriteArrayList<>();
    private volatile CapacityUpdate capacity;
    private final java.util.concurrent.atomic.AtomicLong version = new java.util.concurrent.atomic.AtomicLong();

    public FakeRouter(List<WorkerInfo> workers, Function<RouteRequest, RouteDecision> decide) {
        this.workers = List.copyOf(workers);
        this.decide = decide;
    }

    /** What ListWorkers answers from now on. */
    public void listWorkers(List<WorkerInfo> workers) {
        this.workers = List.copyOf(workers);
    }

    public void decide(Function<RouteRequest, RouteDecision> decide) {
        this.decide = decide;
    }

    /** The whole state with {@code saturatedModels} saturated (their workers busy) and every other model free. */
    public CapacityUpdate capacity(java.util.Set<String> saturatedModels) {
        java.util.Map<String, ModelCapacity.Builder> models = new java.util.LinkedHashMap<>();
        for (WorkerInfo w : workers) {
            boolean saturated = saturatedModels.contains(w.getModel());
            ModelCapacity.Builder m = models.computeIfAbsent(w.getModel(), k -> ModelCapacity.newBuilder().setModel(k)
                    .setSaturated(saturated));
            m.addWorkers(WorkerHeadroom.newBuilder().setInfo(w).setBusy(saturated).setCapacityBlocks(1000));
            if (!saturated && w.getRoutable()) {
                m.setFreeWorkers(m.getFreeWorkers() + 1);
            }
        }
        CapacityUpdate.Builder u = CapacityUpdate.newBuilder().setRouterId("fake-router")
                .setVersion(version.incrementAndGet()).setTs(System.currentTimeMillis());
        models.values().forEach(u::addModels);
        return u.build();
    }

    /** Sends {@code update} to every watcher, and to later ones as their first message. */
    public void pushCapacity(CapacityUpdate update) {
        capacity = update;
        for (StreamObserver<CapacityUpdate> w : watchers) {
            synchronized (w) {
                w.onNext(update);
            }
        }
    }

    /** Ends every capacity stream (as a router that goes away does). */
    public void endCapacityStreams() {
        for (StreamObserver<CapacityUpdate> w : watchers) {
            synchronized (w) {
                w.onError(io.grpc.Status.UNAVAILABLE.withDescription("router going away").asRuntimeException());
            }
        }
        watchers.clear();
    }

    public int capacityWatchers() {
        return watchers.size();
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
    public void watchCapacity(WatchCapacityRequest request, StreamObserver<CapacityUpdate> observer) {
        CapacityUpdate now = capacity != null ? capacity : capacity(java.util.Set.of());
        synchronized (observer) {
            observer.onNext(now);
        }
        watchers.add(observer);
        if (observer instanceof io.grpc.stub.ServerCallStreamObserver<CapacityUpdate> server) {
            server.setOnCancelHandler(() -> watchers.remove(observer));
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
