package io.flotilla.router.service;

import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WatchCapacityRequest;
import io.grpc.Status;
import io.grpc.stub.ServerCallStreamObserver;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import reactor.core.Disposable;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * Serves {@code WatchCapacity}: pushes the router's capacity view to every watching gateway when it
 * changes.
 *
 * <p>Contract, per stream: the first message is the whole state; after that, the whole state again
 * after a change ({@link #changed()}), at most {@code coalesce} after the change, and again after
 * {@code heartbeat} without one, so a watcher can tell a quiet router from a stuck stream. Versions
 * increase with every distinct update this process builds. A change that leaves the state as it was
 * sends nothing.
 *
 * <p>Coalescing: the first change after a quiet spell is built and sent at once; changes arriving
 * within {@code coalesce} of that update are sent together when the interval ends. So a burst of
 * bookings and releases costs one update per interval, and a lone Release reaches the watchers after
 * one scheduler hand-off.
 *
 * <p>Cost bound: building and sending an update is linear in the fleet (every worker's headroom goes out each
 * time; at 1,024 workers that was 47 % of the router's samples during a bench, on the thread its Route calls
 * share). So the next update may not start before {@code cost / maxShare} has passed since the last one
 * started, {@code cost} being what the last one took: the publisher spends at most {@code maxShare} of its
 * thread, whatever the fleet size and the rate of changes, and a small fleet, whose updates cost microseconds,
 * keeps {@code coalesce} as its interval.
 *
 * <p>Slow watchers: a stream whose transport is not ready (gRPC flow control, {@code isReady()}) is
 * sent nothing; it keeps only the latest update, which replaces any older one it has not taken
 * (counted as superseded), and gets it when the stream is ready again. Nothing waits for a watcher.
 *
 * <p>Threads: {@link #changed()} may be called from any thread and never blocks (a compare-and-set,
 * and a task submitted once per interval); everything else — building, sending, adding and removing
 * watchers — runs on {@code scheduler}, which must run its tasks one at a time.
 */
public final class CapacityPublisher implements AutoCloseable {

    /**
     * @param coalesce  changes within this long of the last update wait for the interval's end
     * @param heartbeat the state is sent again after this long without an update
     * @param maxShare  the most of its thread the publisher spends building and sending updates, in (0, 1]
     */
    public record Settings(Duration coalesce, Duration heartbeat, double maxShare) {
        /** The share unless configured otherwise. */
        public static final double MAX_SHARE = 0.1;

        public Settings {
            if (coalesce == null || coalesce.isNegative() || heartbeat == null || heartbeat.isNegative()
                    || heartbeat.isZero()) {
                throw new IllegalArgumentException("coalesce must be >= 0 and heartbeat positive");
            }
            if (!(maxShare > 0 && maxShare <= 1)) {
                throw new IllegalArgumentException("capacity max-share must be in (0, 1]: " + maxShare);
            }
        }

        public Settings(Duration coalesce, Duration heartbeat) {
            this(coalesce, heartbeat, MAX_SHARE);
        }
    }

    private final Supplier<List<ModelCapacity>> state;
    private final String routerId;
    private final Scheduler scheduler;
    private final LongSupplier nanoTime;
    private final long coalesceNanos;
    private final long heartbeatNanos;
    private final double maxShare;
    private final AtomicBoolean dirty = new AtomicBoolean();
    /** The earliest the next update may be built: {@code coalesce} or the cost bound after the last one's start. */
    private volatile long nextBuildNanos;
    private volatile long dirtySinceNanos;
    private volatile int watcherCount;
    private final Counter sent;
    private final Counter superseded;
    private final Timer pushDelay;
    private final Timer buildTime;
    private Disposable heartbeatTask;

    // Confined to the scheduler.
    private final List<Watcher> watchers = new ArrayList<>();
    private List<ModelCapacity> last;
    private CapacityUpdate lastUpdate;
    private long version;
    private long lastSentNanos;
    private boolean closed;

    /**
     * @param scheduler runs every task of the publisher, one at a time; its {@code now} is the wall clock
     *                  of {@code CapacityUpdate.ts}
     * @param nanoTime  the monotonic clock of coalescing, heartbeats and the push delay ({@code System::nanoTime})
     */
    public CapacityPublisher(Supplier<List<ModelCapacity>> state, String routerId, Scheduler scheduler,
                             LongSupplier nanoTime, Settings settings, MeterRegistry registry) {
        this.state = Objects.requireNonNull(state, "state");
        this.routerId = Objects.requireNonNull(routerId, "routerId");
        this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
        this.nanoTime = Objects.requireNonNull(nanoTime, "nanoTime");
        this.coalesceNanos = settings.coalesce().toNanos();
        this.heartbeatNanos = settings.heartbeat().toNanos();
        this.maxShare = settings.maxShare();
        this.nextBuildNanos = nanoTime.getAsLong();
        Gauge.builder("flotilla.router.capacity.watchers", this, p -> p.watcherCount)
                .description("Open WatchCapacity streams").register(registry);
        sent = Counter.builder("flotilla.router.capacity.updates")
                .description("Capacity updates sent on WatchCapacity streams").register(registry);
        superseded = Counter.builder("flotilla.router.capacity.superseded")
                .description("Capacity updates a slow watcher never took because a newer one replaced them")
                .register(registry);
        pushDelay = Timer.builder("flotilla.router.capacity.push.delay")
                .description("From a capacity change to its update handed to the watching streams")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(1)).register(registry);
        buildTime = Timer.builder("flotilla.router.capacity.build")
                .description("Building one capacity update and handing it to the watching streams (linear in the fleet)")
                .publishPercentileHistogram().minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(1)).register(registry);
    }

    /** Starts the heartbeat. */
    public CapacityPublisher start() {
        heartbeatTask = scheduler.schedulePeriodically(this::heartbeat, heartbeatNanos, heartbeatNanos,
                TimeUnit.NANOSECONDS);
        return this;
    }

    /** Capacity may have changed: a booking, a release, a load report, membership. Any thread; never blocks. */
    public void changed() {
        if (watcherCount == 0) {
            return; // nobody to tell; a new watcher gets the state as it is then
        }
        if (!dirty.compareAndSet(false, true)) {
            return; // an update is already due and will read the state as it is then
        }
        long now = nanoTime.getAsLong();
        dirtySinceNanos = now;
        long wait = nextBuildNanos - now;
        try {
            if (wait <= 0) {
                scheduler.schedule(this::flush);
            } else {
                scheduler.schedule(this::flush, wait, TimeUnit.NANOSECONDS);
            }
        } catch (RejectedExecutionException stopping) {
            dirty.set(false);
        }
    }

    /**
     * Adds a watcher: it gets the whole state at once, then every update. Must be called from the
     * gRPC method itself (handlers can only be set before it returns).
     */
    public void watch(WatchCapacityRequest request, ServerCallStreamObserver<CapacityUpdate> stream) {
        Watcher w = new Watcher(stream, Set.copyOf(request.getModelsList()));
        stream.setOnCancelHandler(() -> runOnScheduler(() -> remove(w)));
        stream.setOnReadyHandler(() -> runOnScheduler(w::drain));
        runOnScheduler(() -> add(w));
    }

    /** Open streams. */
    public int watchers() {
        return watcherCount;
    }

    /** Ends every stream with UNAVAILABLE ("router stopping", so gateways turn to another replica) and stops. */
    @Override
    public void close() {
        CountDownLatch done = new CountDownLatch(1);
        try {
            scheduler.schedule(() -> {
                closed = true;
                for (Watcher w : watchers) {
                    w.end();
                }
                watchers.clear();
                watcherCount = 0;
                done.countDown();
            });
            done.await(1, TimeUnit.SECONDS);
        } catch (RejectedExecutionException alreadyStopped) {
            // the scheduler is gone; the server's shutdown ends the streams
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (heartbeatTask != null) {
            heartbeatTask.dispose();
        }
    }

    private void add(Watcher w) {
        if (closed) {
            w.end();
            return;
        }
        watchers.add(w);
        watcherCount = watchers.size();
        List<ModelCapacity> now = state.get();
        if (lastUpdate == null || !now.equals(last)) {
            broadcast(now); // also sends the new watcher its first message
        } else {
            w.offer(lastUpdate, new HashMap<>());
        }
    }

    private void remove(Watcher w) {
        w.open = false;
        if (watchers.remove(w)) {
            watcherCount = watchers.size();
        }
    }

    private void flush() {
        long start = nanoTime.getAsLong();
        long early = nextBuildNanos - start;
        if (early > 0 && !closed) {
            // asked for while the last update was being built, before its cost was known: wait for the bound
            try {
                scheduler.schedule(this::flush, early, TimeUnit.NANOSECONDS);
            } catch (RejectedExecutionException stopping) {
                dirty.set(false);
            }
            return;
        }
        long since = dirtySinceNanos;
        dirty.set(false);
        if (closed) {
            return;
        }
        List<ModelCapacity> models = state.get();
        if (!models.equals(last)) {
            broadcast(models);
            pushDelay.record(Math.max(0, nanoTime.getAsLong() - since), TimeUnit.NANOSECONDS);
        }
        long cost = nanoTime.getAsLong() - start;
        buildTime.record(cost, TimeUnit.NANOSECONDS);
        nextBuildNanos = start + Math.max(coalesceNanos, (long) (cost / maxShare));
    }

    private void heartbeat() {
        if (!closed && !watchers.isEmpty() && nanoTime.getAsLong() - lastSentNanos >= heartbeatNanos) {
            broadcast(state.get());
        }
    }

    private void broadcast(List<ModelCapacity> models) {
        last = models;
        lastUpdate = CapacityUpdate.newBuilder().setRouterId(routerId).setVersion(++version)
                .setTs(scheduler.now(TimeUnit.MILLISECONDS)).addAllModels(models).build();
        lastSentNanos = nanoTime.getAsLong();
        Map<Set<String>, CapacityUpdate> filtered = new HashMap<>();
        for (Watcher w : List.copyOf(watchers)) {
            w.offer(lastUpdate, filtered);
        }
    }

    private void runOnScheduler(Runnable task) {
        try {
            scheduler.schedule(task);
        } catch (RejectedExecutionException stopping) {
            // shutting down: the stream ends with the server
        }
    }

    /** One stream: holds at most the latest update it could not take yet. */
    private final class Watcher {
        final ServerCallStreamObserver<CapacityUpdate> stream;
        final Set<String> models;
        CapacityUpdate pending;
        boolean open = true;

        Watcher(ServerCallStreamObserver<CapacityUpdate> stream, Set<String> models) {
            this.stream = stream;
            this.models = models;
        }

        void offer(CapacityUpdate update, Map<Set<String>, CapacityUpdate> filtered) {
            if (pending != null) {
                superseded.increment();
            }
            pending = models.isEmpty() ? update : filtered.computeIfAbsent(models, m -> only(update, m));
            drain();
        }

        void drain() {
            if (!open || pending == null || !stream.isReady()) {
                return;
            }
            CapacityUpdate next = pending;
            pending = null;
            try {
                stream.onNext(next);
                sent.increment();
            } catch (RuntimeException gone) {
                remove(this); // cancelled between the check and the send
            }
        }

        void end() {
            if (open) {
                open = false;
                try {
                    stream.onError(Status.UNAVAILABLE.withDescription("router " + routerId + " stopping").asRuntimeException());
                } catch (RuntimeException alreadyClosed) {
                    // cancelled by the client meanwhile
                }
            }
        }
    }

    private static CapacityUpdate only(CapacityUpdate update, Set<String> models) {
        CapacityUpdate.Builder b = update.toBuilder().clearModels();
        for (ModelCapacity m : update.getModelsList()) {
            if (models.contains(m.getModel())) {
                b.addModels(m);
            }
        }
        return b.build();
    }
}
