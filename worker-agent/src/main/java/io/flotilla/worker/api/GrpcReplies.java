package io.flotilla.worker.api;

import io.grpc.stub.ServerCallStreamObserver;

/** {@link Replies} over a gRPC server stream: a failure becomes the stream's status ({@link GrpcErrors}). */
final class GrpcReplies<T> implements Replies<T> {

    private final ServerCallStreamObserver<T> stream;

    GrpcReplies(ServerCallStreamObserver<T> stream) {
        this.stream = stream;
    }

    @Override
    public void next(T message) {
        stream.onNext(message);
    }

    @Override
    public void complete() {
        stream.onCompleted();
    }

    @Override
    public void fail(CallFailure failure) {
        stream.onError(GrpcErrors.toStatus(failure).asRuntimeException());
    }

    @Override
    public boolean cancelled() {
        return stream.isCancelled();
    }
}
