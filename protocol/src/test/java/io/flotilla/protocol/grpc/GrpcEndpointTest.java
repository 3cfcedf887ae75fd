package io.flotilla.protocol.grpc;

import io.flotilla.protocol.v1.FindMatchesRequest;
import io.flotilla.protocol.v1.FindMatchesResponse;
import io.flotilla.protocol.v1.IndexerServiceGrpc;
import io.flotilla.protocol.v1.IndexerStats;
import io.flotilla.protocol.v1.IndexerStatsRequest;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.reflection.v1.ServerReflectionGrpc;
import io.grpc.reflection.v1.ServerReflectionRequest;
import io.grpc.reflection.v1.ServerReflectionResponse;
import io.grpc.reflection.v1.ServiceResponse;
import io.grpc.stub.StreamObserver;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The shared gRPC server over real sockets: inline methods, the executor for the rest, a taken port. */
class GrpcEndpointTest {

    /** Records the thread each method ran on. */
    private static final class ThreadRecorder extends IndexerServiceGrpc.IndexerServiceImplBase {
        final Map<String, String> threads = new ConcurrentHashMap<>();

        @Override
        public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
            threads.put("FindMatches", Thread.currentThread().getName());
            observer.onNext(FindMatchesResponse.getDefaultInstance());
            observer.onCompleted();
        }

        @Override
        public void stats(IndexerStatsRequest request, StreamObserver<IndexerStats> observer) {
            threads.put("Stats", Thread.currentThread().getName());
            observer.onNext(IndexerStats.getDefaultInstance());
            observer.onCompleted();
        }
    }

    /** What {@code grpcurl list} asks: the reflection service names every service served, health included. */
    @Test
    void reflectionListsEveryServiceEvenWhenEveryMethodIsInline() throws Exception {
        Set<String> all = Set.of(IndexerServiceGrpc.getFindMatchesMethod().getFullMethodName(),
                IndexerServiceGrpc.getStatsMethod().getFullMethodName());
        try (GrpcEndpoint endpoint = new GrpcEndpoint("test", "127.0.0.1", 0, List.of(new ThreadRecorder()), List.of(),
                all).start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
            try {
                CompletableFuture<ServerReflectionResponse> answer = new CompletableFuture<>();
                StreamObserver<ServerReflectionRequest> requests = ServerReflectionGrpc.newStub(channel)
                        .serverReflectionInfo(new StreamObserver<>() {
                            @Override
                            public void onNext(ServerReflectionResponse r) {
                                answer.complete(r);
                            }

                            @Override
                            public void onError(Throwable t) {
                                answer.completeExceptionally(t);
                            }

                            @Override
                            public void onCompleted() {
                            }
                        });
                requests.onNext(ServerReflectionRequest.newBuilder().setListServices("").build());
                requests.onCompleted();
                assertThat(answer.get(10, TimeUnit.SECONDS).getListServicesResponse().getServiceList())
                        .extracting(ServiceResponse::getName)
                        .contains("flotilla.v1.IndexerService", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection");
            } finally {
                channel.shutdownNow();
            }
        }
    }

    @Test
    void inlineMethodsRunOnTheTransportThreadAndTheOthersOnTheExecutor() {
        ThreadRecorder service = new ThreadRecorder();
        try (GrpcEndpoint endpoint = new GrpcEndpoint("test", "127.0.0.1", 0, List.of(service), List.of(),
                Set.of(IndexerServiceGrpc.getFindMatchesMethod().getFullMethodName())).start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
            try {
                var stub = IndexerServiceGrpc.newBlockingStub(channel);
                stub.findMatches(FindMatchesRequest.getDefaultInstance());
                stub.stats(IndexerStatsRequest.getDefaultInstance());
            } finally {
                channel.shutdownNow();
            }
        }
        // With only some methods inline gRPC still looks each call up on its executor and may run an
        // inline one there too (about one in twenty under load), so only the executor side is certain.
        assertThat(service.threads.get("Stats")).as("gRPC's default executor").contains("executor");
    }

    @Test
    void withEveryMethodInlineEveryCallRunsOnTheTransportThread() {
        Map<String, Integer> threads = new ConcurrentHashMap<>();
        IndexerServiceGrpc.IndexerServiceImplBase service = new IndexerServiceGrpc.IndexerServiceImplBase() {
            @Override
            public void findMatches(FindMatchesRequest request, StreamObserver<FindMatchesResponse> observer) {
                threads.merge(Thread.currentThread().getName(), 1, Integer::sum);
                observer.onNext(FindMatchesResponse.getDefaultInstance());
                observer.onCompleted();
            }
        };
        Set<String> all = Set.of(IndexerServiceGrpc.getFindMatchesMethod().getFullMethodName(),
                IndexerServiceGrpc.getStatsMethod().getFullMethodName());
        try (GrpcEndpoint endpoint = new GrpcEndpoint("test", "127.0.0.1", 0, List.of(service), List.of(), all).start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
            try {
                var stub = IndexerServiceGrpc.newBlockingStub(channel);
                for (int i = 0; i < 200; i++) {
                    stub.findMatches(FindMatchesRequest.getDefaultInstance());
                }
            } finally {
                channel.shutdownNow();
            }
        }
        assertThat(threads.keySet()).as("200 calls").allMatch(name -> name.contains("worker-ELG"));
        assertThat(threads.values().stream().mapToInt(Integer::intValue).sum()).isEqualTo(200);
    }

    @Test
    void aTakenPortIsAnErrorNamingThePort() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            GrpcEndpoint endpoint = new GrpcEndpoint("test", "127.0.0.1", taken.getLocalPort(), List.of(new ThreadRecorder()));
            assertThatThrownBy(endpoint::start).hasMessageContaining("127.0.0.1:" + taken.getLocalPort());
        }
    }

    @Test
    void unknownMethodsAreUnimplementedNotACrash() {
        try (GrpcEndpoint endpoint = new GrpcEndpoint("test", "127.0.0.1", 0, List.of()).start()) {
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
            try {
                assertThatThrownBy(() -> IndexerServiceGrpc.newBlockingStub(channel).stats(IndexerStatsRequest.getDefaultInstance()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
            } finally {
                channel.shutdownNow();
            }
        }
    }

    /** A worker binds port 0, advertises the port it got, then serves: UNIMPLEMENTED before, answered after. */
    @Test
    void aServiceAddedToAStartedEndpointIsServedOnItsBoundPort() {
        try (GrpcEndpoint endpoint = new GrpcEndpoint("test", "127.0.0.1", 0, List.of()).start()) {
            assertThat(endpoint.port()).isPositive();
            ManagedChannel channel = NettyChannelBuilder.forAddress("127.0.0.1", endpoint.port()).usePlaintext().build();
            try {
                var stub = IndexerServiceGrpc.newBlockingStub(channel);
                assertThatThrownBy(() -> stub.stats(IndexerStatsRequest.getDefaultInstance()))
                        .isInstanceOfSatisfying(StatusRuntimeException.class,
                                e -> assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNIMPLEMENTED));
                ThreadRecorder service = new ThreadRecorder();
                endpoint.addService(service);
                assertThat(stub.stats(IndexerStatsRequest.getDefaultInstance())).isNotNull();
                assertThat(service.threads).containsKey("Stats");
            } finally {
                channel.shutdownNow();
            }
        }
    }
}
