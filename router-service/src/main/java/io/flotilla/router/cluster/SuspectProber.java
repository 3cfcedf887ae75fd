package io.flotilla.router.cluster;

import io.grpc.ManagedChannel;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Gives suspect workers their way back: a worker a gateway reported failing gets no new requests
 * until it answers the standard gRPC health check as SERVING again.
 */
public final class SuspectProber implements AutoCloseable {

    private final WorkerDirectory directory;
    private final Runnable onCleared;
    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    /** @param onCleared told after a worker is routable again (capacity returned) */
    public SuspectProber(WorkerDirectory directory, Runnable onCleared) {
        this.directory = directory;
        this.onCleared = onCleared;
    }

    /** Probes every suspect worker once; called periodically. */
    public void probe() {
        directory.suspectEndpoints().forEach((id, endpoint) -> {
            if (endpoint == null || endpoint.isBlank()) {
                return;
            }
            try {
                HealthCheckResponse r = HealthGrpc.newBlockingStub(channel(endpoint))
                        .withDeadlineAfter(500, TimeUnit.MILLISECONDS)
                        .check(HealthCheckRequest.getDefaultInstance());
                if (r.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                    directory.clearSuspect(id);
                    onCleared.run();
                }
            } catch (RuntimeException stillDown) {
                // stays suspect; the lease removes it if it never comes back
            }
        });
    }

    private ManagedChannel channel(String endpoint) {
        return channels.computeIfAbsent(endpoint, e -> NettyChannelBuilder.forTarget(e).usePlaintext().build());
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
    }
}
