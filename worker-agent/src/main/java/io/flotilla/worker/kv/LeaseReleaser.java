package io.flotilla.worker.kv;

import io.flotilla.protocol.v1.ReleaseKvLeaseRequest;
import io.flotilla.protocol.v1.ReleaseKvLeaseResponse;
import io.flotilla.protocol.v1.WorkerServiceGrpc;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Tells prefill workers that a handoff's blocks are no longer needed ({@code ReleaseKvLease}),
 * fire-and-forget: a release that does not arrive only makes the lease run to its expiry. One
 * channel per source endpoint, kept until {@link #close()}.
 */
public final class LeaseReleaser implements AutoCloseable {

    private static final Logger log = LoggerFactory.getLogger(LeaseReleaser.class);
    private static final long DEADLINE_MS = 5_000;

    private final Map<String, ManagedChannel> channels = new ConcurrentHashMap<>();
    private volatile boolean closed;

    /** Sends the release in the background; never throws, never blocks. */
    public void release(String endpoint, String leaseId, boolean transferred) {
        if (closed || endpoint.isEmpty() || leaseId.isEmpty()) {
            return;
        }
        ReleaseKvLeaseRequest request = ReleaseKvLeaseRequest.newBuilder().setLeaseId(leaseId)
                .setTransferred(transferred).build();
        try {
            WorkerServiceGrpc.newStub(channel(endpoint)).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                    .releaseKvLease(request, new StreamObserver<>() {
                        @Override
                        public void onNext(ReleaseKvLeaseResponse r) {
                            if (!r.getReleased()) {
                                log.debug("lease {} at {} was no longer held", leaseId, endpoint);
                            }
                        }

                        @Override
                        public void onError(Throwable t) {
                            log.info("releasing lease {} at {} failed ({}); it will expire there", leaseId, endpoint, t.toString());
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
        } catch (RuntimeException e) {
            log.info("releasing lease {} at {} failed ({}); it will expire there", leaseId, endpoint, e.toString());
        }
    }

    private ManagedChannel channel(String endpoint) {
        return channels.computeIfAbsent(endpoint, e -> NettyChannelBuilder.forTarget(e).usePlaintext().build());
    }

    @Override
    public void close() {
        closed = true;
        channels.values().forEach(ManagedChannel::shutdownNow);
        channels.clear();
    }
}
