package io.flotilla.router.cluster;

import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Takes a worker whose process died out of routing when its connection goes, not a lease later. The router keeps a
 * standard gRPC health {@code Watch} open to every worker routing may pick (one idle HTTP/2 stream each, on the
 * channel {@link WorkerChannels} keeps per endpoint). When the process exits or is killed, its kernel closes the
 * connection and the stream fails at once; the worker is then suspect ({@link WorkerDirectory#markSuspect(String,
 * long)}, for that process's epoch only): no new requests until the {@link SuspectProber} finds it SERVING again, and
 * the lease removes it if it never answers. A worker that says NOT_SERVING (it is shutting down) is suspect too.
 *
 * <p>Only a watch that was established (it answered SERVING) and then broke counts: a worker the router cannot reach
 * at all (another network, a firewall, no health service) stays routable on its lease as before, and its watch is
 * tried again with exponential backoff up to {@code retryMaxMs}. A host that vanishes without closing its
 * connections sends nothing; its lease still decides. Thread-safe: {@link #sync} runs on the router's timer, the
 * streams' events on gRPC's threads.
 */
public final class WorkerWatch implements AutoCloseable {

    private static final long RETRY_FIRST_MS = 1_000;

    private final WorkerDirectory directory;
    private final WorkerChannels channels;
    private final Runnable onLost;
    private final LongSupplier clockMs;
    private final long retryMaxMs;
    /** The open watch of each watched worker, by id. */
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();
    /** Workers whose watch could not be set up: when to try again and the delay after that (guarded by this). */
    private final Map<String, long[]> retries = new HashMap<>();
    private final AtomicLong lost = new AtomicLong();
    private final AtomicLong unreachable = new AtomicLong();
    private volatile boolean closed;

    /**
     * @param onLost     told after a worker became suspect (capacity went)
     * @param clockMs    milliseconds, for the retry backoff
     * @param retryMaxMs the longest wait before trying again to watch a worker that could not be watched
     */
    public WorkerWatch(WorkerDirectory directory, WorkerChannels channels, Runnable onLost, LongSupplier clockMs,
                       long retryMaxMs) {
        this.directory = directory;
        this.channels = channels;
        this.onLost = onLost;
        this.clockMs = clockMs;
        this.retryMaxMs = Math.max(RETRY_FIRST_MS, retryMaxMs);
    }

    /**
     * Opens a watch on every routable worker that has none (unless it waits out a retry), cancels those of workers
     * no longer routable or replaced by a new process, and shuts down channels no worker uses; called periodically.
     */
    public synchronized void sync() {
        if (closed) {
            return;
        }
        long now = clockMs.getAsLong();
        Map<String, MembershipState.Target> targets = new HashMap<>();
        for (MembershipState.Target t : directory.routableTargets()) {
            targets.put(t.workerId(), t);
        }
        watches.values().removeIf(w -> {
            boolean stale = !w.target.equals(targets.get(w.target.workerId()));
            if (stale) {
                w.cancel("worker no longer routable");
            }
            return stale;
        });
        retries.keySet().retainAll(targets.keySet());
        Set<String> endpoints = new HashSet<>(directory.suspectEndpoints().values());
        for (MembershipState.Target t : targets.values()) {
            endpoints.add(t.endpoint());
            long[] retry = retries.get(t.workerId());
            if (!watches.containsKey(t.workerId()) && (retry == null || now >= retry[0])) {
                open(t);
            }
        }
        channels.retainOnly(endpoints);
    }

    private void open(MembershipState.Target target) {
        Watch w = new Watch(target);
        watches.put(target.workerId(), w);
        try {
            HealthGrpc.newStub(channels.of(target.endpoint())).watch(HealthCheckRequest.getDefaultInstance(), w);
        } catch (RuntimeException channelClosed) {
            watches.remove(target.workerId(), w);
        }
    }

    /** Watches open now, established or not. */
    public int watching() {
        return watches.size();
    }

    /** Watches open now that answered SERVING: the workers whose death this router would notice at once. */
    public int established() {
        int n = 0;
        for (Watch w : watches.values()) {
            if (w.established) {
                n++;
            }
        }
        return n;
    }

    /** Established watches that broke or reported NOT_SERVING: workers made suspect by their connection. */
    public long lost() {
        return lost.get();
    }

    /** Watches that could not be set up (tried again later; the worker stays routable on its lease). */
    public long unreachable() {
        return unreachable.get();
    }

    @Override
    public synchronized void close() {
        closed = true;
        watches.values().forEach(w -> w.cancel("router stopping"));
        watches.clear();
    }

    private synchronized void retryLater(String workerId) {
        long[] retry = retries.get(workerId);
        long delay = retry == null ? RETRY_FIRST_MS : Math.min(retryMaxMs, retry[1] * 2);
        retries.put(workerId, new long[] {clockMs.getAsLong() + delay, delay});
    }

    private synchronized void watchEstablished(String workerId) {
        retries.remove(workerId);
    }

    /** One worker process's health stream. */
    private final class Watch implements ClientResponseObserver<HealthCheckRequest, HealthCheckResponse> {

        final MembershipState.Target target;
        private volatile ClientCallStreamObserver<HealthCheckRequest> call;
        private volatile boolean established;
        private volatile boolean over;

        Watch(MembershipState.Target target) {
            this.target = target;
        }

        @Override
        public void beforeStart(ClientCallStreamObserver<HealthCheckRequest> requestStream) {
            call = requestStream;
        }

        @Override
        public void onNext(HealthCheckResponse r) {
            switch (r.getStatus()) {
                case SERVING -> {
                    if (!established) {
                        established = true;
                        watchEstablished(target.workerId());
                    }
                }
                case NOT_SERVING -> lost("NOT_SERVING");
                default -> unwatchable(); // the server does not know the overall service
            }
        }

        @Override
        public void onError(Throwable t) {
            ended();
        }

        @Override
        public void onCompleted() {
            ended();
        }

        /** The stream is over: lost when it had been established, else unreachable for now. */
        private void ended() {
            if (over) {
                return;
            }
            if (established) {
                lost("connection lost");
            } else {
                unwatchable();
            }
        }

        /** Never established: the worker stays routable on its lease, and is tried again later. */
        private void unwatchable() {
            if (over) {
                return;
            }
            over = true;
            watches.remove(target.workerId(), this);
            cancel("not watchable");
            if (!closed) {
                unreachable.incrementAndGet();
                retryLater(target.workerId());
            }
        }

        private void lost(String why) {
            if (over) {
                return;
            }
            over = true;
            watches.remove(target.workerId(), this);
            cancel(why);
            if (!closed) {
                lost.incrementAndGet();
                directory.markSuspect(target.workerId(), target.epoch());
                onLost.run();
            }
        }

        void cancel(String why) {
            over = true;
            ClientCallStreamObserver<HealthCheckRequest> c = call;
            if (c != null) {
                c.cancel(why, null);
            }
        }
    }
}
