package io.flotilla.gateway.client;

import io.flotilla.protocol.v1.EmbedRequest;
import io.flotilla.protocol.v1.EmbedResponse;
import io.flotilla.protocol.v1.GenerateChunk;
import io.flotilla.protocol.v1.GenerateRequest;
import io.flotilla.protocol.v1.PrefillRequest;
import io.flotilla.protocol.v1.PrefillResult;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.ClientInterceptor;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * WorkerService of any worker, by endpoint ({@code host:port}). One plaintext channel per endpoint,
 * created on first use and kept until {@link #close()}: a worker's channel reconnects by itself when
 * the worker comes back on the same endpoint.
 */
public final class WorkerClient implements AutoCloseable {

    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private final Duration prefillTimeout;
    private final List<ClientInterceptor> interceptors;

    public WorkerClient(Duration prefillTimeout) {
        this(prefillTimeout, List.of());
    }

    /** @param interceptors run on every call (the gateway's observation interceptor: trace context, grpc.client metrics) */
    public WorkerClient(Duration prefillTimeout, List<ClientInterceptor> interceptors) {
        this.prefillTimeout = prefillTimeout;
        this.interceptors = List.copyOf(interceptors);
    }

    /** The token stream of one request; cancelling the subscription cancels the call. */
    public Flux<GenerateChunk> generate(String endpoint, GenerateRequest request) {
        return Flux.defer(() -> GrpcCalls.serverStreaming(channel(endpoint), WorkerServiceGrpc.getGenerateMethod(),
                request, null));
    }

    public Mono<PrefillResult> prefill(String endpoint, PrefillRequest request) {
        return Mono.defer(() -> GrpcCalls.unary(channel(endpoint), WorkerServiceGrpc.getPrefillMethod(), request,
                prefillTimeout));
    }

    /** The embeddings of one request's inputs; unary, bounded by the prefill timeout (a pooling pass is a prefill). */
    public Mono<EmbedResponse> embed(String endpoint, EmbedRequest request) {
        return Mono.defer(() -> GrpcCalls.unary(channel(endpoint), WorkerServiceGrpc.getEmbedMethod(), request,
                prefillTimeout));
    }

    private ManagedChannel channel(String endpoint) {
        return channels.computeIfAbsent(endpoint, e -> NettyChannelBuilder.forTarget(e)
                .usePlaintext()
                .directExecutor() // tokens are handled on the I/O thread: nothing downstream blocks
                .maxInboundMessageSize(64 * 1024 * 1024)
                .keepAliveTime(30, TimeUnit.SECONDS)
                .intercept(interceptors)
                .build());
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
