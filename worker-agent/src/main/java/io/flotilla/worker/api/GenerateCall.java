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
 * After the client cancelled, nothing more is written. Every chunk says whether the request
 * continues a KV handoff; the last one also why a handoff was refused.
 */
final class GenerateCall implements TokenSink {

    private final ServerCallStreamObserver<GenerateChunk> stream;
    private final String workerId;
    private final WorkerMetrics metrics;
    private final boolean handoffUsed;
    private final int importedTokens;
    private final String handoffRefusedReason;

    /** A request prefilled here; {@code handoffRefusedReason} is empty unless a handoff was refused. */
    GenerateCall(ServerCallStreamObserver<GenerateChunk> stream, String workerId, WorkerMetrics metrics,
                 String handoffRefusedReason) {
        this(stream, workerId, metrics, false, 0, handoffRefusedReason);
    }

    /** A request continuing a handoff whose blocks brought {@code importedTokens} prompt tokens here. */
    GenerateCall(ServerCallStreamObserver<GenerateChunk> stream, String workerId, WorkerMetrics metrics,
                 int importedTokens) {
        this(stream, workerId, metrics, true, importedTokens, "");
    }

    private GenerateCall(ServerCallStreamObserver<GenerateChunk> stream, String workerId, WorkerMetrics metrics,
                         boolean handoffUsed, int importedTokens, String handoffRefusedReason) {
        this.stream = stream;
        this.workerId = workerId;
        this.metrics = metrics;
        this.handoffUsed = handoffUsed;
        this.importedTokens = importedTokens;
        this.handoffRefusedReason = handoffRefusedReason;
    }

    @Override
    public void onTokens(int[] tokens) {
        if (stream.isCancelled()) {
            return;
        }
        GenerateChunk.Builder chunk = GenerateChunk.newBuilder().setWorkerId(workerId).setHandoffUsed(handoffUsed);
        for (int t : tokens) {
            chunk.addTokenIds(t);
        }
        stream.onNext(chunk.build());
    }

    @Override
    public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
        metrics.requestFinished(promptTokens, cachedTokens, importedTokens);
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
                .setHandoffUsed(handoffUsed)
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
