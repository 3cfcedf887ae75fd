package io.flotilla.router.cluster;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.StreamObserver;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Gives suspect workers their way back: a worker a gateway reported failing, or whose connection the
 * {@link WorkerWatch} lost, gets no new requests until it answers the standard gRPC health check as SERVING again.
 * Probes are asynchronous (at most one per worker in flight), so a round over many unreachable workers never holds
 * the thread that calls {@link #probe} — the router's timer, which also runs leases.
 */
public final class SuspectProber {

    private static final long DEADLINE_MS = 500;

    private final WorkerDirectory directory;
    private final WorkerChannels channels;
    private final Runnable onCleared;
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();

    /** @param onCleared told after a worker is routable again (capacity returned) */
    public SuspectProber(WorkerDirectory directory, WorkerChannels channels, Runnable onCleared) {
        this.directory = directory;
        this.channels = channels;
        this.onCleared = onCleared;
    }

    /** Probes every suspect worker that has no probe in flight; called periodically. */
    public void probe() {
        directory.suspectEndpoints().forEach((id, endpoint) -> {
            if (endpoint == null || endpoint.isBlank() || !inFlight.add(id)) {
                return;
            }
            try {
                HealthGrpc.newStub(channels.of(endpoint)).withDeadlineAfter(DEADLINE_MS, TimeUnit.MILLISECONDS)
                        .check(HealthCheckRequest.getDefaultInstance(), new StreamObserver<>() {
                            @Override
                            public void onNext(HealthCheckResponse r) {
                                if (r.getStatus() == HealthCheckResponse.ServingStatus.SERVING) {
                                    directory.clearSuspect(id);
                                    onCleared.run();
                                }
                            }

                            @Override
                            public void onError(Throwable stillDown) {
                                inFlight.remove(id); // stays suspect; the lease removes it if it never comes back
                            }

                            @Override
                            public void onCompleted() {
                                inFlight.remove(id);
                            }
                        });
            } catch (RuntimeException channelClosed) {
                inFlight.remove(id); // the channel was shut down between the read and the call: next round
            }
        });
    }
}
