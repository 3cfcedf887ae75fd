package io.flotilla.protocol.grpc;

import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.IndexerStats;
import io.flotilla.protocol.v1.IndexerStatsRequest;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A server on a {@link SharedEventLoop} whose handler calls another server through a channel on the
 * same loop and answers from the callback: request, outgoing call, its answer and the reply are all
 * handled on the loop's one thread (real sockets).
 */
class SharedEventLoopTest {

    @Test
    void aHandlerThatCallsOutAndAnswersFromTheCallbackNeverChangesThread() {
        IndexerServiceGrpc.IndexerServiceImplBase backend = new IndexerServiceGrpc.IndexerServiceImplBase() {
            @Override
            public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
                observer.onNext(FindMatchesResponse.getDefaultInstance());
                observer.onCompleted();
            }
        };
        Map<String, String> threads = new ConcurrentHashMap<>();
        try (SharedEventLoop loop = new SharedEventLoop("test-io");
             GrpcEndpoint back = new GrpcEndpoint("back", "127.0.0.1", 0, List.of(backend)).start()) {
            ManagedChannel out = loop.connect(NettyChannelBuilder.forAddress("127.0.0.1", back.port())
                    .usePlaintext().directExecutor()).build();
            IndexerServiceGrpc.IndexerServiceImplBase front = new IndexerServiceGrpc.IndexerServiceImplBase() {
                @Override
                public void stats(IndexerStatsRequest request, StreamObserver<IndexerStats> observer) {
                    threads.put("request", Thread.currentThread().getName());
                    IndexerServiceGrpc.newStub(out).findMatches(FindMatchesRequest.getDefaultInstance(), new StreamObserver<>() {
                        @Override
                        public void onNext(FindMatchesResponse value) {
                        }

                        @Override
                        public void onError(Throwable t) {
                            observer.onError(t);
                        }

                        @Override
                        public void onCompleted() {
                            threads.put("answer", Thread.currentThread().getName());
                            observer.onNext(IndexerStats.getDefaultInstance());
                            observer.onCompleted();
                        }
                    });
                }
            };
            Set<String> allInline = Set.of(IndexerServiceGrpc.getStatsMethod().getFullMethodName(),
                    IndexerServiceGrpc.getFindMatchesMethod().getFullMethodName());
            try (GrpcEndpoint frontEnd = new GrpcEndpoint("front", "127.0.0.1", 0, List.of(front), List.of(), allInline)
                    .onLoop(loop).start()) {
                ManagedChannel client = NettyChannelBuilder.forAddress("127.0.0.1", frontEnd.port()).usePlaintext().build();
                try {
                    IndexerServiceGrpc.newBlockingStub(client).stats(IndexerStatsRequest.getDefaultInstance());
                } finally {
                    client.shutdownNow();
                    out.shutdownNow();
                }
            }
        }
        assertThat(threads.get("request")).startsWith("test-io");
        assertThat(threads.get("answer")).isEqualTo(threads.get("request"));
    }
}
