package io.flotilla.gateway.client;

import io.grpc.CallOptions;
import io.grpc.Channel;
import io.grpc.ClientCall;
import io.grpc.MethodDescriptor;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.StreamObserver;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * gRPC calls as Reactor publishers. Nothing happens until subscription; the deadline (when given)
 * starts at subscription; cancelling the subscription cancels the call, which for
 * {@code WorkerService.Generate} frees the engine slot at once. A call is made with the subscriber's context
 * (the HTTP request's observation, which WebFlux keeps in the Reactor context) in thread-locals, so a
 * channel's observation interceptor continues the request's trace whichever thread subscribes.
 */
final class GrpcCalls {

    private static final ContextSnapshotFactory SNAPSHOTS = ContextSnapshotFactory.builder().build();

    private GrpcCalls() {
    }

    static <Q, R> Mono<R> unary(Channel channel, MethodDescriptor<Q, R> method, Q request, Duration deadline) {
        return Mono.create(sink -> {
            try (ContextSnapshot.Scope ignored = SNAPSHOTS.setThreadLocalsFrom(sink.contextView())) {
                ClientCall<Q, R> call = channel.newCall(method, options(deadline));
                sink.onCancel(() -> call.cancel("cancelled by the gateway", null));
                ClientCalls.asyncUnaryCall(call, request, new StreamObserver<>() {
                    @Override
                    public void onNext(R value) {
                        sink.success(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        sink.error(t);
                    }

                    @Override
                    public void onCompleted() {
                        sink.success();
                    }
                });
            }
        });
    }

    static <Q, R> Flux<R> serverStreaming(Channel channel, MethodDescriptor<Q, R> method, Q request, Duration deadline) {
        return Flux.create(sink -> {
            try (ContextSnapshot.Scope ignored = SNAPSHOTS.setThreadLocalsFrom(sink.contextView())) {
                ClientCall<Q, R> call = channel.newCall(method, options(deadline));
                sink.onCancel(() -> call.cancel("cancelled by the gateway", null));
                ClientCalls.asyncServerStreamingCall(call, request, new StreamObserver<>() {
                    @Override
                    public void onNext(R value) {
                        sink.next(value);
                    }

                    @Override
                    public void onError(Throwable t) {
                        sink.error(t);
                    }

                    @Override
                    public void onCompleted() {
                        sink.complete();
                    }
                });
            }
        });
    }

    private static CallOptions options(Duration deadline) {
        return deadline == null ? CallOptions.DEFAULT
                : CallOptions.DEFAULT.withDeadlineAfter(deadline.toNanos(), TimeUnit.NANOSECONDS);
    }
}
