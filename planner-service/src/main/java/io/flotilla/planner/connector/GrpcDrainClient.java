package io.flotilla.planner.connector;

import io.flotilla.protocol.v1.DrainRequest;
import io.flotilla.protocol.v1.DrainResponse;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** {@link DrainClient} over gRPC: one plaintext channel per drain, closed when it answers. */
public final class GrpcDrainClient implements DrainClient {

    /** Extra time the call may take beyond the drain deadline before it is abandoned. */
    private static final long SLACK_MS = 10_000;

    @Override
    public CompletableFuture<Integer> drain(String endpoint, Duration deadline) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        ManagedChannel channel;
        try {
            channel = NettyChannelBuilder.forTarget(endpoint).usePlaintext().build();
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
            return done;
        }
        WorkerServiceGrpc.newStub(channel)
                .withDeadlineAfter(deadline.toMillis() + SLACK_MS, TimeUnit.MILLISECONDS)
                .drain(DrainRequest.newBuilder().setDeadlineMs((int) Math.min(Integer.MAX_VALUE, deadline.toMillis())).build(),
                        new StreamObserver<>() {
                            @Override
                            public void onNext(DrainResponse r) {
                                done.complete(r.getInFlight());
                            }

                            @Override
                            public void onError(Throwable t) {
                                done.completeExceptionally(t);
                            }

                            @Override
                            public void onCompleted() {
                                done.complete(0);
                            }
                        });
        return done.whenComplete((r, e) -> channel.shutdown());
    }
}
