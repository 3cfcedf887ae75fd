package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.FinishReason;
import io.flotilla.protocol.v1.KvEvent;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.worker.engine.AdapterSupport;
import io.flotilla.worker.engine.EmbeddingSupport;
import io.flotilla.worker.engine.Engine;
import io.flotilla.worker.engine.EngineFeature;
import io.flotilla.worker.engine.EngineListeners;
import io.flotilla.worker.engine.EngineLoad;
import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.KvDigest;
import io.flotilla.worker.engine.KvTierStatus;
import io.flotilla.worker.engine.KvTransferSupport;
import io.flotilla.worker.engine.PrefillSink;
import io.flotilla.worker.engine.PrefilledKv;
import io.flotilla.worker.engine.RequestHandle;
import io.flotilla.worker.engine.ResidentBlocks;
import io.flotilla.worker.engine.TokenLogprob;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.kvbm.TierIo;

import java.nio.ByteBuffer;
import java.time.Clock;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The simulated engine: a {@link Scheduler} driven in (scaled) real time by one thread, behind the
 * {@link Engine} port.
 *
 * <p>Each step is scheduled, then the driver waits the plan's {@code stepMs} (already divided by
 * {@code speedup}) on the injected {@link Sleeper}, less the time the step itself took, then
 * completes it; tokens therefore appear when the simulated forward pass ends. The driver blocks
 * while no request is in flight. One lock guards the scheduler; it is held while scheduling and
 * completing but never while waiting out a step, nor while the engine's callbacks run: sinks, KV events, step
 * times and adapter changes made under it are queued and run, in order and one at a time, once it is released
 * ({@link Deliveries}), so a slow sink does not hold up the scheduler and one that calls back in does not re-enter it.
 *
 * <p>Tests construct it with a {@link ManualClock} as both clock and sleeper, never call
 * {@link #start()}, and drive it with {@link #runOnce()}: steps then run synchronously while
 * simulated time advances by each step's duration.
 *
 * <p>Cost per engine (defaults, 8192 blocks): about 0.5 MiB of heap for the pool's flat arrays
 * and seq_hash table plus per-request token and block arrays, one parked thread, and up to
 * {@code totalBlocks × kvBytesPerBlock} (128 MiB) of direct memory allocated in 4 MiB slabs as
 * slots are first used; set {@code kvBytesPerBlock = 0} to run many engines in one JVM. Direct
 * memory is returned when the closed engine is garbage collected.
 *
 * <p>With lower KV tiers ({@link SimEngineConfig#tiers()}) a tier thread copies blocks down and back;
 * it takes the engine lock only to publish a copy's result (index, events), never while copying.
 */
public final class SimulatedEngine implements Engine {

    private static final System.Logger LOG = System.getLogger(SimulatedEngine.class.getName());
    private static final long IDLE_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private final SimEngineConfig config;
    private final Clock clock;
    private final Sleeper sleeper;
    private final ReentrantLock lock = new ReentrantLock();
    /** Callbacks made under {@link #lock}, run after it is released. */
    private final Deliveries deliveries = new Deliveries();
    private final Condition workArrived = lock.newCondition();
    private final Scheduler scheduler;
    private final KvExchange exchange;
    private final SimKvTransfer transfer;
    private final SimTierStatus tierStatus;
    private final EngineListeners listeners;
    /** Present when LoRA adapters are configured. */
    private final AdapterSupport adapterSupport;
    /** Present unless embeddings are off ({@code embeddingDimensions} 0). */
    private final SimEmbeddings embeddings;
    private Thread driver;
    private boolean closed;
    private CompletableFuture<Void> drained;

    /** An engine on {@code clock} and {@code sleeper} (tests pass a manual one), not started, with no scripted replies. */
    public SimulatedEngine(SimEngineConfig config, Clock clock, Sleeper sleeper, EngineListeners listeners) {
        this(config, clock, sleeper, listeners, null, Scheduler.tierThread(config, "kv-tiers"));
    }

    /**
     * @param listeners its observers; KV events pending from construction (a restarted disk tier's blocks) go to
     *                  them as batch 1 before this returns
     * @param script    replies for the prompts it has rules for (null: none)
     * @param tierIo    where the lower KV tiers copy; unused without tiers
     */
    private SimulatedEngine(SimEngineConfig config, Clock clock, Sleeper sleeper, EngineListeners listeners,
                            SimScript script, TierIo tierIo) {
        this.config = config;
        this.clock = clock;
        this.sleeper = sleeper;
        this.listeners = listeners;
        this.scheduler = new Scheduler(config, this::deliverEvents, script, tierIo, this::underLock);
        this.exchange = new KvExchange(scheduler);
        this.transfer = config.kvBytesPerBlock() > 0 ? new SimKvTransfer(this) : null;
        if (scheduler.tiers() != null) {
            this.tierStatus = new SimTierStatus(this);
        } else {
            this.tierStatus = null;
        }
        scheduler.adapters().setListener(() -> deliveries.add(listeners.adaptersChanged()));
        this.adapterSupport = scheduler.adapters().enabled() ? () -> withScheduler(s -> s.adapters().status()) : null;
        this.embeddings = config.embeddingDimensions() > 0 ? new SimEmbeddings(config.embeddingDimensions(),
                config.vocabSize(), config.maxContextTokens(), config.seed()) : null;
        lock.lock();
        try {
            scheduler.flushEvents();
        } finally {
            unlock();
        }
    }

    /** The lower tiers' owner: runs a tier job's result under the engine lock, publishes its events, wakes the driver. */
    private void underLock(Runnable work) {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            work.run();
            scheduler.flushEvents();
            workArrived.signal();
        } finally {
            unlock();
        }
    }

    /** An engine on the system clock, already started. */
    public static SimulatedEngine startRealTime(SimEngineConfig config, EngineListeners listeners, String name) {
        return startRealTime(config, null, listeners, name);
    }

    /** An engine on the system clock with scripted replies ({@code script} may be null), already started. */
    public static SimulatedEngine startRealTime(SimEngineConfig config, SimScript script, EngineListeners listeners,
                                                String name) {
        return new SimulatedEngine(config, Clock.systemUTC(), Sleeper.SYSTEM, listeners, script,
                Scheduler.tierThread(config, name + "-kv-tiers")).start(name);
    }

    /** Starts the driver thread (a daemon named {@code name}); at most once. */
    public SimulatedEngine start(String name) {
        lock.lock();
        try {
            if (driver != null || closed) {
                throw new IllegalStateException("engine already started or closed");
            }
            driver = new Thread(this::drive, name);
            driver.setDaemon(true);
            driver.start();
            return this;
        } finally {
            unlock();
        }
    }

    public SimEngineConfig config() {
        return config;
    }

    @Override
    public RequestHandle submit(EngineRequest request, TokenSink sink) {
        return submitDeferred(sink, deferred -> scheduler.submit(request, deferred));
    }

    /**
     * Submits under the lock with {@code sink}'s callbacks deferred ({@link DeferredSink}), wakes the driver,
     * serialises cancel. The handle is known to the deferred sink before any callback can run.
     */
    RequestHandle submitDeferred(TokenSink sink, Function<TokenSink, RequestHandle> submit) {
        DeferredSink deferred = new DeferredSink(sink);
        lock.lock();
        try {
            if (closed) {
                throw new EngineUnavailableException("engine is closed");
            }
            RequestHandle handle = new LockedHandle(submit.apply(deferred));
            deferred.handle = handle;
            workArrived.signal();
            return handle;
        } finally {
            unlock();
        }
    }

    /** Every sampling parameter of its synthetic model, logprobs, and JSON output on a cl100k_base model. */
    @Override
    public io.flotilla.protocol.v1.EngineCapabilities capabilities() {
        return scheduler.capabilities();
    }

    @Override
    public ResidentBlocks residentBlocks() {
        return withScheduler(Scheduler::residentBlocks);
    }

    @Override
    public KvDigest kvDigest() {
        return withScheduler(Scheduler::kvDigest);
    }

    @Override
    public EngineLoad load() {
        return withScheduler(Scheduler::load);
    }

    @Override
    public int blockSize() {
        return config.blockSize();
    }

    @Override
    public int clearCache() {
        return withScheduler(Scheduler::clearCache);
    }

    /** Salts apply from the first block past the request's public prefix ({@link io.flotilla.protocol.hash.KvScope}). */
    @Override
    public TenantIsolation tenantIsolation() {
        return TenantIsolation.TENANT_ISOLATION_SALT_AFTER_PUBLIC_PREFIX;
    }

    /**
     * {@link KvTransferSupport} when KV payloads are enabled ({@code kvBytesPerBlock > 0}), {@link KvTierStatus} when
     * it has tiers below the device, {@link AdapterSupport} when LoRA adapters are configured,
     * {@link EmbeddingSupport} unless embeddings are off ({@link SimEmbeddings}).
     */
    @Override
    public <F extends EngineFeature> Optional<F> feature(Class<F> type) {
        Object feature = type == KvTransferSupport.class ? transfer
                : type == KvTierStatus.class ? tierStatus
                : type == AdapterSupport.class ? adapterSupport
                : type == EmbeddingSupport.class ? embeddings
                : null;
        return Optional.ofNullable(feature).map(type::cast);
    }

    @Override
    public CompletableFuture<Void> drain() {
        CompletableFuture<Void> future;
        lock.lock();
        try {
            scheduler.startDrain();
            if (drained == null) {
                drained = new CompletableFuture<>();
            }
            future = drained;
        } finally {
            unlock();
        }
        completeDrainIfIdle();
        return future;
    }

    /**
     * Copies the payload of resident block {@code seqHash} into {@code dst}; false when the block is
     * not resident or payloads are disabled.
     */
    public boolean readBlock(long seqHash, ByteBuffer dst) {
        return withScheduler(s -> {
            int slot = s.pool().lookup(seqHash);
            if (slot < 0 || s.pool().payloads() == null) {
                return false;
            }
            s.pool().payloads().read(slot, dst);
            return true;
        });
    }

    /** Submits through the {@link KvExchange} under the lock, wakes the driver, serialises cancel. */
    RequestHandle submitExchange(Function<KvExchange, RequestHandle> submit) {
        lock.lock();
        try {
            if (closed) {
                throw new EngineUnavailableException("engine is closed");
            }
            RequestHandle handle = submit.apply(exchange);
            workArrived.signal();
            return new LockedHandle(handle);
        } finally {
            unlock();
        }
    }

    KvExchange exchange() {
        return exchange;
    }

    /** Runs {@code action} on the {@link KvExchange} under the lock; fails when the engine is closed. */
    <T> T withExchange(Function<KvExchange, T> action) {
        lock.lock();
        try {
            if (closed) {
                throw new EngineUnavailableException("engine is closed");
            }
            return action.apply(exchange);
        } finally {
            unlock();
        }
    }

    /** Runs {@code action} on the scheduler under the engine lock (inspection, tests, KV transfer). */
    public <T> T withScheduler(Function<Scheduler, T> action) {
        lock.lock();
        try {
            return action.apply(scheduler);
        } finally {
            unlock();
        }
    }

    /**
     * Runs one step on the calling thread: schedule, wait its duration on the sleeper, complete.
     * Only for engines that were not {@link #start started}.
     *
     * @return false when nothing could be scheduled
     */
    public boolean runOnce() throws InterruptedException {
        if (driver != null) {
            throw new IllegalStateException("the driver thread runs this engine");
        }
        return stepOnce();
    }

    /** Runs steps until no request is in flight or {@code maxSteps} ran; returns the steps run. */
    public int runUntilIdle(int maxSteps) throws InterruptedException {
        int steps = 0;
        while (steps < maxSteps && !withScheduler(Scheduler::isIdle) && runOnce()) {
            steps++;
        }
        return steps;
    }

    @Override
    public void close() {
        Thread t;
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            scheduler.startDrain();
            scheduler.failAll(new EngineUnavailableException("engine closed"));
            workArrived.signalAll();
            t = driver;
        } finally {
            unlock();
        }
        scheduler.closeTiers(); // outside the lock: the tier thread may be waiting for it to publish a copy
        lock.lock();
        try {
            if (scheduler.pool().payloads() != null) {
                scheduler.pool().payloads().close(); // its memory may belong to a transfer agent closed next
            }
        } finally {
            unlock();
        }
        if (t != null && t != Thread.currentThread()) {
            t.interrupt();
            try {
                t.join(TimeUnit.SECONDS.toMillis(5));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        completeDrainIfIdle();
    }

    private void drive() {
        try {
            while (true) {
                lock.lock();
                try {
                    while (!closed && scheduler.isIdle()) {
                        workArrived.await();
                    }
                    if (closed) {
                        return;
                    }
                } finally {
                    unlock();
                }
                if (!stepOnce()) {
                    sleeper.sleepNanos(IDLE_POLL_NANOS);
                }
            }
        } catch (InterruptedException e) {
            if (!isClosed()) {
                LOG.log(System.Logger.Level.WARNING, "simulated engine driver interrupted; stopping");
            }
        } catch (RuntimeException | Error e) {
            LOG.log(System.Logger.Level.ERROR, "simulated engine driver failed; closing the engine", e);
            close();
        }
    }

    private boolean stepOnce() throws InterruptedException {
        long start = sleeper.nanoTime();
        StepPlan plan;
        lock.lock();
        try {
            if (closed) {
                return false;
            }
            plan = scheduler.schedule(clock.millis());
            if (plan.isEmpty()) {
                // nothing could run (requests waiting for blocks or for an adapter load): the empty plan
                // is completed at once, or the next schedule would find it outstanding
                scheduler.complete(plan);
            }
        } finally {
            unlock();
        }
        if (!plan.isEmpty()) {
            long left = (long) (plan.stepMs() * 1e6) - (sleeper.nanoTime() - start);
            if (left > 0) {
                sleeper.sleepNanos(left);
            }
            lock.lock();
            try {
                if (!closed) {
                    scheduler.complete(plan);
                }
                double stepMs = plan.stepMs();
                deliveries.add(() -> listeners.stepMs().accept(stepMs));
            } finally {
                unlock();
            }
        }
        completeDrainIfIdle();
        return !plan.isEmpty();
    }

    private void completeDrainIfIdle() {
        CompletableFuture<Void> done = null;
        lock.lock();
        try {
            if (drained != null && scheduler.isIdle()) {
                done = drained;
            }
        } finally {
            unlock();
        }
        if (done != null) {
            done.complete(null); // outside the lock: dependents may call back into the engine
        }
    }

    private boolean isClosed() {
        lock.lock();
        try {
            return closed;
        } finally {
            unlock();
        }
    }

    /** Called under the lock; delivered after it (in order, one batch at a time: {@link Deliveries}). */
    private void deliverEvents(long position, List<KvEvent> events) {
        deliveries.add(() -> listeners.kvEvents().onEvents(position, events));
    }

    /** Releases the engine lock, then runs the callbacks queued under it unless the thread still holds it. */
    private void unlock() {
        lock.unlock();
        if (!lock.isHeldByCurrentThread()) {
            deliveries.drain();
        }
    }

    /** {@code sink} with its result queued for after the lock; a sink that throws releases the pin, as it would inline. */
    PrefillSink deferred(PrefillSink sink) {
        return new PrefillSink() {
            @Override
            public void onPrefilled(PrefilledKv kv) {
                deliveries.add(() -> {
                    try {
                        sink.onPrefilled(kv);
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "prefill sink of " + kv.requestId() + " failed", e);
                        kv.pin().release();
                    }
                });
            }

            @Override
            public void onError(Throwable error) {
                deliveries.add(() -> sink.onError(error));
            }
        };
    }

    /**
     * A token sink whose callbacks run after the lock. A sink that throws gets nothing more and its request is
     * cancelled (its blocks released), as the scheduler drops a request whose sink throws inline.
     */
    private final class DeferredSink implements TokenSink {
        private final TokenSink inner;
        /** Set under the lock before any callback can be delivered. */
        private volatile RequestHandle handle;
        /** Read and written only by delivered callbacks, which never overlap. */
        private volatile boolean broken;

        DeferredSink(TokenSink inner) {
            this.inner = inner;
        }

        @Override
        public void onTokens(int[] tokens) {
            deliveries.add(() -> forward(() -> inner.onTokens(tokens)));
        }

        @Override
        public void onTokens(int[] tokens, TokenLogprob[] logprobs) {
            deliveries.add(() -> forward(() -> inner.onTokens(tokens, logprobs)));
        }

        @Override
        public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
            deliveries.add(() -> {
                if (!broken) {
                    inner.onFinish(reason, promptTokens, cachedTokens, completionTokens);
                }
            });
        }

        @Override
        public void onError(Throwable error) {
            deliveries.add(() -> {
                if (!broken) {
                    inner.onError(error);
                }
            });
        }

        private void forward(Runnable call) {
            if (broken) {
                return;
            }
            try {
                call.run();
            } catch (RuntimeException e) {
                broken = true;
                LOG.log(System.Logger.Level.DEBUG, "a token sink failed; cancelling its request", e);
                RequestHandle h = handle;
                if (h != null) {
                    h.cancel();
                }
            }
        }
    }

    /** Serialises cancel with the driver. */
    private final class LockedHandle implements RequestHandle {
        private final RequestHandle inner;

        LockedHandle(RequestHandle inner) {
            this.inner = inner;
        }

        @Override
        public String requestId() {
            return inner.requestId();
        }

        @Override
        public void cancel() {
            lock.lock();
            try {
                inner.cancel();
            } finally {
                unlock();
            }
            completeDrainIfIdle();
        }
    }
}
