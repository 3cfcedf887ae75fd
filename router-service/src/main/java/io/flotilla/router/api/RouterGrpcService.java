package io.flotilla.router.api;

import io.flotilla.protocol.v1.Ack;
import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ListWorkersRequest;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.RequestRef;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RouteRequest;
import io.flotilla.protocol.v1.RouterServiceGrpc;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.flotilla.protocol.v1.WorkerFailure;
import io.flotilla.router.service.CapacityPublisher;
import io.flotilla.router.service.RequestRouter;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

/**
 * RouterService: validates, then hands every call to the {@link RequestRouter}. No method blocks
 * ({@code Route} asks the indexer asynchronously; bookings and their router-sync records are
 * in-memory updates and a queue offer), so every call runs on the transport thread that read it
 * ({@link #INLINE_METHODS}). That also keeps one gateway's calls in the order it sent them: a
 * {@code Release} sent before the next {@code Route} is applied before that Route is priced.
 * {@code WatchCapacity} only registers its stream; its updates are sent from the publisher's thread.
 */
public final class RouterGrpcService extends RouterServiceGrpc.RouterServiceImplBase {

    /** Methods cheap and non-blocking enough to run on the gRPC transport thread, without an executor hop: all. */
    public static final java.util.Set<String> INLINE_METHODS = RouterServiceGrpc.getServiceDescriptor().getMethods().stream()
            .map(m -> m.getFullMethodName()).collect(java.util.stream.Collectors.toUnmodifiableSet());

    private final RequestRouter engine;
    private final CapacityPublisher capacity;

    public RouterGrpcService(RequestRouter engine, CapacityPublisher capacity) {
        this.engine = engine;
        this.capacity = capacity;
    }

    @Override
    public void route(RouteRequest request, StreamObserver<RouteDecision> observer) {
        String invalid = validate(request);
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        engine.route(request, decision -> {
            if (decision.getWorkerId().isEmpty() && !decision.getBusy()) {
                observer.onError(Status.UNAVAILABLE.withDescription("no live worker serves model '" + request.getModel()
                        + "' with block size " + request.getBlockSize()
                        + (request.getExcludeCount() > 0 ? " outside " + request.getExcludeList() : "")).asRuntimeException());
                return;
            }
            observer.onNext(decision);
            observer.onCompleted();
        });
    }

    @Override
    public void markPrefillDone(RequestRef request, StreamObserver<Ack> observer) {
        engine.prefillDone(request.getRequestId());
        ack(observer);
    }

    @Override
    public void release(RequestRef request, StreamObserver<Ack> observer) {
        engine.release(request.getRequestId());
        ack(observer);
    }

    @Override
    public void reportWorkerFailure(WorkerFailure request, StreamObserver<Ack> observer) {
        engine.reportFailure(request.getWorkerId());
        ack(observer);
    }

    @Override
    public void listWorkers(ListWorkersRequest request, StreamObserver<ListWorkersResponse> observer) {
        observer.onNext(engine.listWorkers());
        observer.onCompleted();
    }

    /** The first message is the whole state, then the whole state after each change ({@link CapacityPublisher}). */
    @Override
    public void watchCapacity(WatchCapacityRequest request, StreamObserver<CapacityUpdate> observer) {
        capacity.watch(request, (ServerCallStreamObserver<CapacityUpdate>) observer);
    }

    private static String validate(RouteRequest r) {
        if (r.getRequestId().isBlank()) {
            return "request_id is required";
        }
        if (r.getModel().isBlank()) {
            return "model is required";
        }
        if (r.getBlockSize() == 0) {
            return "block_size is required";
        }
        if (r.getIsl() < 0 || r.getOsl() < 0) {
            return "isl and osl must not be negative";
        }
        if (r.getEmbed() && (r.getSeqHashesCount() > 0 || r.getAllowDisagg() || r.getOsl() > 0)) {
            return "an embed request carries no seq_hashes, no allow_disagg and osl 0 (it reuses no KV and decodes nothing)";
        }
        return null;
    }

    private static void ack(StreamObserver<Ack> observer) {
        observer.onNext(Ack.getDefaultInstance());
        observer.onCompleted();
    }
}
