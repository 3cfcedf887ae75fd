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
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.RequestHandle;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.time.Duration;
import java.time.Instant;

/** WorkerService of one worker: thin translation between gRPC and the worker's engine. */
public final class WorkerGrpcService extends WorkerServiceGrpc.WorkerServiceImplBase {

    private final WorkerInstance worker;

    public WorkerGrpcService(WorkerInstance worker) {
        this.worker = worker;
    }

    @Override
    public void generate(GenerateRequest request, StreamObserver<GenerateChunk> observer) {
        ServerCallStreamObserver<GenerateChunk> stream = (ServerCallStreamObserver<GenerateChunk>) observer;
        String invalid = validate(request);
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        // KV transfer between workers lands with disaggregation; until then a handoff is refused and
        // the prompt is prefilled here, which ARCHITECTURE allows as the fallback for any handoff failure.
        String refused = request.hasHandoff() ? "kv transfer is not available on this worker; prefilled locally" : "";
        GenerateCall call = new GenerateCall(stream, worker.identity().id(), worker.metrics(), refused);
        RequestHandle handle;
        try {
            handle = worker.engine().submit(toEngineRequest(request), call);
        } catch (RuntimeException e) {
            observer.onError(GrpcErrors.toStatus(e).asRuntimeException());
            return;
        }
        stream.setOnCancelHandler(handle::cancel);
        if (stream.isCancelled()) { // cancelled before the handler was installed
            handle.cancel();
        }
    }

    @Override
    public void prefill(PrefillRequest request, StreamObserver<PrefillResult> observer) {
        observer.onError(Status.UNIMPLEMENTED
                .withDescription("prefill-only execution is not available on this worker (role "
                        + worker.identity().role() + ")")
                .asRuntimeException());
    }

    @Override
    public void releaseKvLease(ReleaseKvLeaseRequest request, StreamObserver<ReleaseKvLeaseResponse> observer) {
        observer.onNext(ReleaseKvLeaseResponse.newBuilder().setReleased(false).build());
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

    private String validate(GenerateRequest r) {
        if (r.getRequestId().isBlank()) {
            return "request_id is required";
        }
        if (!r.getModel().isEmpty() && !r.getModel().equals(worker.identity().model())) {
            return "model '" + r.getModel() + "' is not served by " + worker.identity().id()
                    + " (it serves '" + worker.identity().model() + "')";
        }
        if (r.getTokenIdsCount() == 0) {
            return "token_ids must not be empty";
        }
        if (r.hasStop() && r.getStop().getMaxTokens() == 0) {
            return "stop.max_tokens must be at least 1";
        }
        if (!r.hasStop()) {
            return "stop conditions with max_tokens are required";
        }
        if (r.hasSampling() && (r.getSampling().getTemperature() < 0 || Float.isNaN(r.getSampling().getTemperature()))) {
            return "sampling.temperature must be >= 0";
        }
        return null;
    }

    private static EngineRequest toEngineRequest(GenerateRequest r) {
        int[] tokens = new int[r.getTokenIdsCount()];
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = r.getTokenIds(i); // uint32 >= 2^31 arrive negative and are rejected by the engine
        }
        int[] stops = new int[r.getStop().getStopTokenIdsCount()];
        for (int i = 0; i < stops.length; i++) {
            stops[i] = r.getStop().getStopTokenIds(i);
        }
        Long seed = r.hasSampling() && r.getSampling().getHasSeed() ? r.getSampling().getSeed() : null;
        double temperature = r.hasSampling() ? r.getSampling().getTemperature() : 0.0;
        Instant deadline = r.getDeadlineMs() > 0 ? Instant.ofEpochMilli(r.getDeadlineMs()) : null;
        return new EngineRequest(r.getRequestId(), tokens, r.getStop().getMaxTokens(), stops,
                r.getStop().getIgnoreEos(), temperature, seed, deadline);
    }
}
