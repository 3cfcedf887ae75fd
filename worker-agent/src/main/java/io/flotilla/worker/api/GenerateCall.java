package io.flotilla.worker.api;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.Usage;
import io.flotilla.worker.agent.WorkerMetrics;
import io.flotilla.worker.engine.TokenSink;
import io.grpc.stub.ServerCallStreamObserver;

/**
 * Relays one request's engine output to its gRPC stream: a chunk per step, then a final chunk with
 * finish reason and usage. Runs on the engine thread and never blocks (gRPC buffers the stream).
 * After the client cancelled, nothing more is written.
 */
final class GenerateCall implements TokenSink {

    private final ServerCallStreamObserver<GenerateChunk> stream;
    private final String workerId;
    private final WorkerMetrics metrics;
    private final String handoffRefusedReason;

    GenerateCall(ServerCallStreamObserver<GenerateChunk> stream, String workerId, WorkerMetrics metrics,
                 String handoffRefusedReason) {
        this.stream = stream;
        this.workerId = workerId;
        this.metrics = metrics;
        this.handoffRefusedReason = handoffRefusedReason;
    }

    @Override
    public void onTokens(int[] tokens) {
        if (stream.isCancelled()) {
            return;
        }
        GenerateChunk.Builder chunk = GenerateChunk.newBuilder().setWorkerId(workerId);
        for (int t : tokens) {
            chunk.addTokenIds(t);
        }
        stream.onNext(chunk.build());
    }

    @Override
    public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
        metrics.requestFinished(promptTokens, cachedTokens);
        if (stream.isCancelled()) {
            return;
        }
        stream.onNext(GenerateChunk.newBuilder()
                .setWorkerId(workerId)
                .setFinishReason(reason)
                .setUsage(Usage.newBuilder()
                        .setPromptTokens(promptTokens)
                        .setCachedTokens(cachedTokens)
                        .setCompletionTokens(completionTokens))
                .setHandoffRefusedReason(handoffRefusedReason)
                .build());
        stream.onCompleted();
    }

    @Override
    public void onError(Throwable error) {
        if (stream.isCancelled()) {
            return;
        }
        stream.onError(GrpcErrors.toStatus(error).asRuntimeException());
    }
}
