package io.flotilla.worker.api;

import io.flotilla.protocol.v1.ClearKvCacheRequest;
import io.flotilla.protocol.v1.ClearKvCacheResponse;
import io.flotilla.protocol.v1.DrainRequest;
import io.flotilla.protocol.v1.DrainResponse;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.ReleaseKvLeaseRequest;
import io.flotilla.protocol.v1.ReleaseKvLeaseResponse;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.agent.WorkerInstance;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.kv.EngineHandoffs;
import io.flotilla.worker.kv.KvTransferNode;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.time.Duration;

/** WorkerService of one worker: thin translation between gRPC and the worker's engine. */
public final class WorkerGrpcService extends WorkerServiceGrpc.WorkerServiceImplBase {

    private final WorkerInstance worker;

    public WorkerGrpcService(WorkerInstance worker) {
        this.worker = worker;
    }

    @Override
    public void generate(GenerateRequest request, StreamObserver<GenerateChunk> observer) {
        ServerCallStreamObserver<GenerateChunk> stream = (ServerCallStreamObserver<GenerateChunk>) observer;
        String invalid = EngineRequests.invalid(request, worker.identity());
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        if (refused(request.getCacheScope(), observer)) {
            return;
        }
        CancelRelay relay = new CancelRelay();
        stream.setOnCancelHandler(relay::cancel); // only allowed before this method returns
        EngineHandoffs engineSide = worker.engineHandoffs().orElse(null);
        if (request.hasHandoff() && engineSide != null) {
            EngineHandoffDecode.start(worker, engineSide, request, stream, relay);
        } else if (request.hasHandoff()) {
            HandoffDecode.start(worker, request, stream, relay);
        } else {
            submitLocal(worker, request, stream, relay, "");
        }
    }

    /** Runs {@code request} on the worker's engine from its prompt (no handoff, or a refused one). */
    static void submitLocal(WorkerInstance worker, GenerateRequest request, ServerCallStreamObserver<GenerateChunk> stream,
                            CancelRelay relay, String handoffRefusedReason) {
        GenerateCall call = new GenerateCall(stream, worker.identity().id(), worker.metrics(), handoffRefusedReason);
        RequestHandle handle;
        try {
            handle = worker.engine().submit(EngineRequests.of(request), call);
        } catch (RuntimeException e) {
            stream.onError(GrpcErrors.toStatus(e).asRuntimeException());
            return;
        }
        relay.attach(handle);
    }

    /**
     * Prefill only: the prompt's KV stays pinned under a transfer lease (or, when the engine moves KV
     * itself, held by the engine) and the answer is the handoff a decode worker continues from.
     * Workers without a transfer side answer UNIMPLEMENTED.
     */
    @Override
    public void prefill(PrefillRequest request, StreamObserver<PrefillResult> observer) {
        ServerCallStreamObserver<PrefillResult> stream = (ServerCallStreamObserver<PrefillResult>) observer;
        KvTransferNode transfer = worker.transfer().orElse(null);
        EngineHandoffs engineSide = worker.engineHandoffs().orElse(null);
        if (transfer == null && engineSide == null) {
            observer.onError(Status.UNIMPLEMENTED
                    .withDescription("prefill-only execution is not available on " + worker.identity().id() + " (role "
                            + worker.identity().role() + ", no KV transfer agent)")
                    .asRuntimeException());
            return;
        }
        String invalid = EngineRequests.invalid(request, worker.identity());
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        if (refused(request.getCacheScope(), observer)) {
            return;
        }
        CancelRelay relay = new CancelRelay();
        stream.setOnCancelHandler(relay::cancel);
        if (engineSide != null) {
            EnginePrefillCall.start(worker.identity(), worker.metrics(), engineSide, request, stream, relay);
            return;
        }
        try {
            relay.attach(transfer.engine().prefill(EngineRequests.of(request),
                    new PrefillCall(worker.identity(), transfer, worker.metrics(), request, stream)));
        } catch (RuntimeException e) {
            observer.onError(GrpcErrors.toStatus(e).asRuntimeException());
        }
    }

    /** Refuses a cache scope the engine cannot keep apart (counted); true when {@code observer} got the error. */
    private boolean refused(io.flotilla.protocol.v1.CacheScope scope, StreamObserver<?> observer) {
        Status refusal = EngineRequests.refusal(scope, worker.engine().tenantIsolation());
        if (refusal == null) {
            if (!scope.getTenantSalt().isEmpty()) {
                worker.metrics().saltedRequest(scope.getPublicBlocks(), worker.engine().tenantIsolation());
            }
            return false;
        }
        worker.metrics().scopeRefused(refusal.getCode());
        observer.onError(refusal.asRuntimeException());
        return true;
    }

    /** Unpins a handoff's blocks at once; {@code released} is false when no such lease is held. */
    @Override
    public void releaseKvLease(ReleaseKvLeaseRequest request, StreamObserver<ReleaseKvLeaseResponse> observer) {
        boolean released = worker.transfer().map(t -> t.leases().release(request.getLeaseId())).orElse(false);
        observer.onNext(ReleaseKvLeaseResponse.newBuilder().setReleased(released).build());
        observer.onCompleted();
    }

    @Override
    public void getKvSnapshot(KvSnapshotRequest request, StreamObserver<KvSnapshot> observer) {
        observer.onNext(worker.snapshot());
        observer.onCompleted();
    }

    @Override
    public void drain(DrainRequest request, StreamObserver<DrainResponse> observer) {
        Duration deadline = Duration.ofMillis(request.getDeadlineMs() == 0 ? 30_000 : request.getDeadlineMs());
        worker.drain(deadline).whenComplete((inFlight, error) -> {
            if (error != null) {
                observer.onError(GrpcErrors.toStatus(error).asRuntimeException());
            } else {
                observer.onNext(DrainResponse.newBuilder().setInFlight(inFlight).build());
                observer.onCompleted();
            }
        });
    }

    @Override
    public void clearKvCache(ClearKvCacheRequest request, StreamObserver<ClearKvCacheResponse> observer) {
        int cleared = worker.engine().clearCache();
        observer.onNext(ClearKvCacheResponse.newBuilder().setBlocksCleared(cleared).build());
        observer.onCompleted();
    }
}
