package io.flotilla.worker.api;

import io.flotilla.protocol.v1.ClearKvCacheRequest;
import io.flotilla.protocol.v1.ClearKvCacheResponse;
import io.flotilla.protocol.v1.DrainRequest;
import io.flotilla.protocol.v1.DrainResponse;
import io.flotilla.protocol.v1.EmbedRequest;
import io.flotilla.protocol.v1.EmbedResponse;
import io.flotilla.protocol.v1.Embedding;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.KvSnapshot;
import io.flotilla.protocol.v1.KvSnapshotRequest;
import io.flotilla.protocol.v1.KvTierStatsRequest;
import io.flotilla.protocol.v1.KvTierStatsResponse;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.ReleaseKvLeaseRequest;
import io.flotilla.protocol.v1.ReleaseKvLeaseResponse;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.flotilla.worker.engine.EmbeddingSupport;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * WorkerService of one worker: the gRPC adapter of the worker's generation and handoff, which answer through
 * {@link Replies} ({@link GrpcReplies} here) and are cancelled through a {@link CancelRelay}. It knows the
 * engine, the worker's {@link HandoffPath} and how to drain; not the worker object that owns it.
 */
public final class WorkerGrpcService extends WorkerServiceGrpc.WorkerServiceImplBase {

    /** Stops taking work and completes with the requests still in flight at the deadline. */
    @FunctionalInterface
    public interface Drain {
        CompletableFuture<Integer> drain(Duration deadline);
    }

    private final LocalGenerate local;
    private final HandoffPath handoffs;
    private final Drain drain;

    public WorkerGrpcService(LocalGenerate local, HandoffPath handoffs, Drain drain) {
        this.local = local;
        this.handoffs = handoffs;
        this.drain = drain;
    }

    @Override
    public void generate(GenerateRequest request, StreamObserver<GenerateChunk> observer) {
        var stream = (ServerCallStreamObserver<GenerateChunk>) observer;
        String invalid = EngineRequests.invalid(request, local.identity(), local.engine().capabilities());
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        if (refused(request.getCacheScope(), observer)) {
            return;
        }
        CancelRelay relay = new CancelRelay();
        stream.setOnCancelHandler(relay::cancel); // only allowed before this method returns
        Replies<GenerateChunk> replies = new GrpcReplies<>(stream);
        if (request.getN() > 1) {
            ChoiceFanOut.start(local, EngineRequests.of(request), request.getN(), replies, relay);
        } else if (request.hasHandoff()) {
            handoffs.decode(request, replies, relay);
        } else {
            local.submit(request, replies, relay, "");
        }
    }

    /**
     * Prefill only: the prompt's KV stays pinned under a transfer lease (or, when the engine moves KV
     * itself, held by the engine) and the answer is the handoff a decode worker continues from.
     * Workers without a transfer side answer UNIMPLEMENTED.
     */
    @Override
    public void prefill(PrefillRequest request, StreamObserver<PrefillResult> observer) {
        var stream = (ServerCallStreamObserver<PrefillResult>) observer;
        if (!handoffs.servesPrefill()) {
            observer.onError(Status.UNIMPLEMENTED
                    .withDescription("prefill-only execution is not available on " + local.identity().id() + " (role "
                            + local.identity().role() + ", no KV transfer agent)")
                    .asRuntimeException());
            return;
        }
        String invalid = EngineRequests.invalid(request, local.identity(), local.engine().capabilities());
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        if (refused(request.getCacheScope(), observer)) {
            return;
        }
        CancelRelay relay = new CancelRelay();
        stream.setOnCancelHandler(relay::cancel);
        handoffs.prefill(request, new GrpcReplies<>(stream), relay);
    }

    /** Refuses a cache scope the engine cannot keep apart (counted); true when {@code observer} got the error. */
    private boolean refused(io.flotilla.protocol.v1.CacheScope scope, StreamObserver<?> observer) {
        CallFailure refusal = EngineRequests.refusal(scope, local.engine().tenantIsolation());
        if (refusal == null) {
            if (!scope.getTenantSalt().isEmpty()) {
                local.metrics().saltedRequest(scope.getPublicBlocks(), local.engine().tenantIsolation());
            }
            return false;
        }
        Status status = GrpcErrors.toStatus(refusal);
        local.metrics().scopeRefused(status.getCode().name());
        observer.onError(status.asRuntimeException());
        return true;
    }

    /** Unpins a handoff's blocks at once; {@code released} is false when no such lease is held. */
    @Override
    public void releaseKvLease(ReleaseKvLeaseRequest request, StreamObserver<ReleaseKvLeaseResponse> observer) {
        observer.onNext(ReleaseKvLeaseResponse.newBuilder().setReleased(handoffs.releaseLease(request.getLeaseId())).build());
        observer.onCompleted();
    }

    /**
     * The embeddings of the request's inputs, when the engine has {@link EmbeddingSupport}; UNIMPLEMENTED when it has
     * not (its advertised capabilities carry no embedding, so routers do not send it any), INVALID_ARGUMENT for
     * what the engine can never embed.
     */
    @Override
    public void embed(EmbedRequest request, StreamObserver<EmbedResponse> observer) {
        java.util.Optional<EmbeddingSupport> support = local.engine().feature(EmbeddingSupport.class);
        if (support.isEmpty()) {
            observer.onError(Status.UNIMPLEMENTED.withDescription("the engine of " + local.identity().id()
                    + " does not embed").asRuntimeException());
            return;
        }
        String invalid = EngineRequests.invalid(request, local.identity(), support.get());
        if (invalid != null) {
            observer.onError(Status.INVALID_ARGUMENT.withDescription(invalid).asRuntimeException());
            return;
        }
        java.util.List<int[]> inputs = new java.util.ArrayList<>(request.getInputsCount());
        int tokens = 0;
        for (io.flotilla.protocol.v1.EmbedInput input : request.getInputsList()) {
            int[] ids = new int[input.getTokenIdsCount()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = input.getTokenIds(i);
            }
            tokens += ids.length;
            inputs.add(ids);
        }
        int promptTokens = tokens;
        CompletableFuture<java.util.List<float[]>> vectors;
        try {
            vectors = support.get().embed(request.getRequestId(), inputs, request.getDimensions());
        } catch (RuntimeException e) {
            vectors = CompletableFuture.failedFuture(e);
        }
        vectors.whenComplete((out, error) -> {
            if (error != null) {
                Throwable cause = error instanceof java.util.concurrent.CompletionException && error.getCause() != null
                        ? error.getCause() : error;
                observer.onError(GrpcErrors.toStatus(cause).asRuntimeException());
                return;
            }
            EmbedResponse.Builder response = EmbedResponse.newBuilder().setPromptTokens(promptTokens)
                    .setWorkerId(local.identity().id());
            for (float[] v : out) {
                Embedding.Builder e = Embedding.newBuilder();
                for (float x : v) {
                    e.addValues(x);
                }
                response.addEmbeddings(e);
            }
            local.metrics().embedded(out.size(), promptTokens);
            observer.onNext(response.build());
            observer.onCompleted();
        });
    }

    @Override
    public void getKvSnapshot(KvSnapshotRequest request, StreamObserver<KvSnapshot> observer) {
        observer.onNext(KvSnapshots.snapshot(local.identity(), local.engine()));
        observer.onCompleted();
    }

    @Override
    public void getKvTierStats(KvTierStatsRequest request, StreamObserver<KvTierStatsResponse> observer) {
        observer.onNext(KvSnapshots.tierStats(local.engine()));
        observer.onCompleted();
    }

    @Override
    public void drain(DrainRequest request, StreamObserver<DrainResponse> observer) {
        Duration deadline = Duration.ofMillis(request.getDeadlineMs() == 0 ? 30_000 : request.getDeadlineMs());
        drain.drain(deadline).whenComplete((inFlight, error) -> {
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
        int cleared = local.engine().clearCache();
        observer.onNext(ClearKvCacheResponse.newBuilder().setBlocksCleared(cleared).build());
        observer.onCompleted();
    }
}
