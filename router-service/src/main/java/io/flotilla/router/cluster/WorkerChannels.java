package io.flotilla.router.cluster;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One plaintext gRPC channel per worker endpoint, shared by the router's {@link WorkerWatch} and its
 * {@link SuspectProber}. Channels of endpoints no longer in use are shut down ({@link #retainOnly}), so a fleet whose
 * workers come and go on new ports does not keep a connection per port it ever saw. Thread-safe.
 */
public final class WorkerChannels implements AutoCloseable {

    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();

    /** The channel to {@code endpoint} (host:port), made on first use. */
    public ManagedChannel of(String endpoint) {
        return channels.computeIfAbsent(endpoint, e -> NettyChannelBuilder.forTarget(e).usePlaintext().build());
    }

    /** Shuts down the channels of every endpoint not in {@code inUse}. */
    public void retainOnly(Set<String> inUse) {
        channels.entrySet().removeIf(en -> {
            if (inUse.contains(en.getKey())) {
                return false;
            }
            en.getValue().shutdownNow();
            return true;
        });
    }

    /** Open channels (one per endpoint in use). */
    public int size() {
        return channels.size();
    }

    @Override
    public void close() {
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
