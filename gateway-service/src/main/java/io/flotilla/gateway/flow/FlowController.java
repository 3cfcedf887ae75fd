package io.flotilla.gateway.flow;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.ToLongFunction;

/**
 * Flow control between admission and Route, per model: a request is dispatched at once when the
 * model's pool is not saturated, else it waits in the model's {@link FlowQueue} until capacity returns
 * or its deadline passes.
 *
 * <p>Saturated means any of: the router's last pushed {@code ModelCapacity} said so (while a
 * {@code WatchCapacity} stream is up); a Route answered busy less than its retry-after ago; the
 * gateway's own dispatched-and-unfinished requests reach {@code maxInFlight}; {@code maxRouting}
 * dispatched requests still wait for their Route's answer (so a capacity push releases a few
 * requests, not the whole queue). Every change that can end saturation — a push, a slot released or
 * routed, a busy hold ending — runs a dispatch at once; without a stream, the busy hold's end
 * (at most {@code pollInterval}) is the safety-net poll.
 *
 * <p>Shedding happens only at the edges: a full queue rejects ({@code QUEUE_FULL}) unless the arriving
 * request's band is higher than some waiter's, in which case the lowest band's latest-deadline waiter
 * is displaced ({@code DISPLACED}); a waiter whose deadline passes leaves with {@code QUEUE_TIMEOUT};
 * a waiter whose subscriber cancels (the client went away) leaves at once.
 *
 * <p>Invariants per model, under its lock: {@code inFlight ≤ maxInFlight}, {@code routing ≤ inFlight};
 * a waiter is queued, granted, expired, displaced or cancelled, never two of these; a slot counts once
 * however often it is released. Time is the injected scheduler's, so tests move it.
 *
 * <p><b>Why not a Resilience4j Bulkhead</b>: a {@code SemaphoreBulkhead} is a
 * semaphore with a bounded wait. It has one FIFO of waiting threads (reactor's operator does not even
 * wait: it rejects at once), a single wait time for everyone, no per-request deadline, no priorities,
 * no fairness between callers, no displacement and no way to make a permit available because a remote
 * pool said so. Flow control needs all of these, so the old admission limit (a bulkhead in all but
 * name) became the {@code maxInFlight} signal here, and there is one queue, not two.
 *
 * <p><b>Per-flow in-flight limits</b> ({@link TenantGate}, across models and, with a shared store,
 * across gateway replicas) are part of the dispatch decision: dispatch passes over a flow the gate
 * says is at its limit, so its requests wait (and may expire) in the queue and never take another
 * flow's turn. For a limited flow a granted waiter first reserves its model place (counted in
 * {@code inFlight} and {@code routing}), then asks the gate for a place, at most one such ask per
 * flow at a time; a place completes the grant, none gives the reservation back and puts the waiter
 * back in the queue with its own deadline.
 */
public final class FlowController {

    private final Function<String, FlowLimits> limits;
    private final Scheduler scheduler;
    private final FlowMetrics metrics;
    private final long quantum;
    private final ToLongFunction<String> weights;
    private final Duration pollInterval;
    private final TenantGate gate;
    private final Map<String, ModelFlow> models = new ConcurrentHashMap<>();
    /** Flows with a gate ask in flight: dispatch passes over them until it answers. */
    private final java.util.Set<String> asking = ConcurrentHashMap.newKeySet();
    private final AtomicLong seq = new AtomicLong();

    /**
     * @param quantum      DRR tokens per round of a flow of weight 1
     * @param weights      DRR weight of a flow id
     * @param pollInterval longest busy hold without a capacity stream (the safety-net poll)
     */
    public FlowController(Function<String, FlowLimits> limits, Scheduler scheduler, FlowMetrics metrics, long quantum,
                          ToLongFunction<String> weights, Duration pollInterval) {
        this(limits, scheduler, metrics, quantum, weights, pollInterval, TenantGate.NONE);
    }

    /** As the other constructor, with per-flow in-flight limits from {@code gate}. */
    public FlowController(Function<String, FlowLimits> limits, Scheduler scheduler, FlowMetrics metrics, long quantum,
                          ToLongFunction<String> weights, Duration pollInterval, TenantGate gate) {
        this.gate = gate;
        gate.onMayTry(flow -> models.values().forEach(ModelFlow::dispatch));
        this.limits = limits;
        this.scheduler = scheduler;
        this.metrics = metrics;
        this.quantum = quantum;
        this.weights = weights;
        this.pollInterval = pollInterval;
    }

    /** Now on the controller's clock, the base of {@link FlowRequest#deadlineNanos()}. */
    public long nowNanos() {
        return scheduler.now(TimeUnit.NANOSECONDS);
    }

    public FlowLimits limits(String model) {
        return limits.apply(model);
    }

    /**
     * A slot for {@code request}: at once when its model is not saturated and nothing of its band or
     * higher waits, else after waiting; {@link FlowRejected} when shed.
     *
     * @param readmission the request was dispatched before and its Route answered busy: it re-enters
     *                    even a full queue (it had a place before)
     */
    public Mono<FlowSlot> admit(FlowRequest request, boolean readmission) {
        return Mono.create(sink -> model(request.model()).admit(request, readmission, sink));
    }

    /**
     * The router's view of {@code model}, pushed over {@code WatchCapacity}; {@code saturated == null}
     * means no stream is up any more (back to the gateway's own signals and the poll).
     */
    public void capacity(String model, Boolean saturated) {
        model(model).capacity(saturated);
    }

    /** Every model the controller has seen. */
    public List<String> models() {
        return List.copyOf(models.keySet());
    }

    public int queued(String model) {
        ModelFlow m = models.get(model);
        return m == null ? 0 : m.queued();
    }

    public int inFlight(String model) {
        ModelFlow m = models.get(model);
        return m == null ? 0 : m.inFlight();
    }

    /** The queues as {@code GET /actuator/flow} shows them. */
    public Map<String, Object> view() {
        Map<String, Object> out = new LinkedHashMap<>();
        models.forEach((name, m) -> out.put(name, m.view()));
        return out;
    }

    private ModelFlow model(String model) {
        return models.computeIfAbsent(model, m -> new ModelFlow(m, limits.apply(m)));
    }

    /** Whether dispatch may take a request of {@code flow} now (its gate ask answered, and the gate agrees). */
    private boolean eligible(String flow) {
        return !asking.contains(flow) && gate.mayTry(flow);
    }

    private final class ModelFlow {
        final String model;
        final FlowLimits limits;
        final FlowQueue queue;
        int inFlight;
        int routing;
        /** The last pushed saturation; null while no capacity stream is up. */
        Boolean pushedSaturated;
        long busyUntilNanos = Long.MIN_VALUE;
        Disposable busyTimer;

        ModelFlow(String model, FlowLimits limits) {
            this.model = model;
            this.limits = limits;
            this.queue = new FlowQueue(quantum, weights);
            metrics.inFlightGauge(model, this::inFlight);
        }

        void admit(FlowRequest r, boolean readmission, MonoSink<FlowSlot> sink) {
            long now = nowNanos();
            Waiter w = new Waiter(r, seq.incrementAndGet(), now, sink);
            List<Runnable> after = new ArrayList<>(2);
            boolean queued = false;
            synchronized (this) {
                if (queue.size(r.priority()) == 0 && !higherWaiting(r.priority()) && dispatchable(now)
                        && (gate == TenantGate.NONE || eligible(r.flow()))) {
                    after.add(grant(w, now));
                } else if (r.deadlineNanos() <= now) {
                    after.add(() -> expired(r, sink, 0));
                } else {
                    if (!readmission && queue.size() >= limits.maxQueued()) {
                        Waiter victim = queue.displaceable(r.priority());
                        if (victim == null) {
                            metrics.rejected(model, r);
                            sink.error(new FlowRejected(FlowRejected.Reason.QUEUE_FULL, queue.size()
                                    + " requests already wait for '" + model + "' (limit " + limits.maxQueued() + ")"));
                            return;
                        }
                        queue.remove(victim);
                        metrics.dequeued(model, victim.request);
                        after.add(() -> displaced(victim, r, now));
                    }
                    queue.add(w);
                    metrics.enqueued(model, r);
                    queued = true;
                }
            }
            sink.onCancel(() -> cancel(w)); // one callback for every state: queued, asking the gate or granted
            if (queued) {
                armExpiry(w, now);
            }
            after.forEach(Runnable::run);
            if (queued) {
                dispatch(); // room may have opened between the check and the enqueue
            }
        }

        private boolean higherWaiting(Priority p) {
            for (Priority q : Priority.values()) {
                if (q == p) {
                    return false;
                }
                if (queue.size(q) > 0) {
                    return true;
                }
            }
            return false;
        }

        /** Under the lock. */
        private boolean dispatchable(long now) {
            return inFlight < limits.maxInFlight() && routing < limits.maxRouting()
                    && !Boolean.TRUE.equals(pushedSaturated) && now >= busyUntilNanos;
        }

        private void armExpiry(Waiter w, long now) {
            Disposable expiry = scheduler.schedule(() -> expire(w), Math.max(0, w.request.deadlineNanos() - now),
                    TimeUnit.NANOSECONDS);
            synchronized (this) {
                w.expiry = expiry;
                if (w.slot != null || w.cancelled) {
                    expiry.dispose(); // granted or gone before the timer was stored
                }
            }
        }

        /**
         * Under the lock: counts the slot; the returned action completes the waiter outside it. A waiter of
         * a limited flow reserves the slot and asks the gate first ({@link #leased}).
         */
        private Runnable grant(Waiter w, long now) {
            inFlight++;
            routing++;
            String flow = w.request.flow();
            if (gate != TenantGate.NONE && gate.limited(flow)) {
                w.asking = true;
                asking.add(flow);
                return () -> gate.acquire(flow).whenComplete((lease, e) -> leased(w, e == null ? lease : null));
            }
            return complete(w, now, TenantGate.Lease.NONE);
        }

        /** Under the lock: the waiter's slot is granted; the returned action completes it outside the lock. */
        private Runnable complete(Waiter w, long now, TenantGate.Lease lease) {
            Slot slot = new Slot(this, Duration.ofNanos(now - w.enqueuedNanos), lease);
            w.slot = slot;
            metrics.dispatched(model, w.request, slot.waited);
            Disposable expiry = w.expiry;
            return () -> {
                if (expiry != null) {
                    expiry.dispose();
                }
                w.sink.success(slot);
            };
        }

        /**
         * The gate answered a granted waiter's ask: a lease completes its grant; none (its flow is at its
         * limit) gives the reserved slot back and queues the waiter again, unless it left or its deadline
         * passed meanwhile.
         */
        private void leased(Waiter w, TenantGate.Lease lease) {
            Runnable after = null;
            boolean requeued = false;
            long now = nowNanos();
            synchronized (this) {
                w.asking = false;
                asking.remove(w.request.flow());
                if (lease != null && !w.cancelled) {
                    after = complete(w, now, lease);
                } else {
                    inFlight--;
                    routing--;
                    if (lease != null) {
                        after = lease::release; // the client left while the gate was asked
                    } else if (!w.cancelled) {
                        if (now >= w.request.deadlineNanos()) {
                            Disposable expiry = w.expiry;
                            after = () -> {
                                if (expiry != null) {
                                    expiry.dispose();
                                }
                                expired(w.request, w.sink, now - w.enqueuedNanos);
                            };
                        } else {
                            queue.add(w);
                            metrics.enqueued(model, w.request);
                            requeued = w.expiry == null;
                        }
                    }
                }
            }
            if (requeued) {
                armExpiry(w, now); // dispatched at once on arrival: it never had a timer
            }
            if (after != null) {
                after.run();
            }
            models.values().forEach(ModelFlow::dispatch); // the flow's next ask, and room the reservation held
        }

        /** Dispatches waiters while the pool is not saturated. */
        void dispatch() {
            List<Runnable> grants = new ArrayList<>();
            synchronized (this) {
                long now = nowNanos();
                while (queue.size() > 0 && dispatchable(now)) {
                    Waiter w = gate == TenantGate.NONE ? queue.poll() : queue.poll(FlowController.this::eligible);
                    if (w == null) {
                        break; // only flows at their in-flight limit wait
                    }
                    metrics.dequeued(model, w.request);
                    grants.add(grant(w, now));
                }
            }
            grants.forEach(Runnable::run);
        }

        private void expire(Waiter w) {
            synchronized (this) {
                if (!queue.remove(w)) {
                    return; // granted, displaced or cancelled meanwhile
                }
                metrics.dequeued(model, w.request);
            }
            expired(w.request, w.sink, nowNanos() - w.enqueuedNanos);
        }

        private void expired(FlowRequest r, MonoSink<FlowSlot> sink, long waitedNanos) {
            metrics.expired(model, r);
            sink.error(new FlowRejected(FlowRejected.Reason.QUEUE_TIMEOUT, "no capacity for '" + model
                    + "' became free within the request's queue deadline (waited " + waitedNanos / 1_000_000 + " ms)"));
        }

        private void displaced(Waiter victim, FlowRequest by, long now) {
            if (victim.expiry != null) {
                victim.expiry.dispose();
            }
            metrics.displaced(model, victim.request);
            victim.sink.error(new FlowRejected(FlowRejected.Reason.DISPLACED, "the queue for '" + model
                    + "' is full and a " + by.priority().label() + " request took the place of this "
                    + victim.request.priority().label() + " one"));
        }

        /**
         * The subscriber cancelled: a queued waiter leaves the queue; a granted one gives its slot back
         * (a cancel racing the grant would otherwise lose it; after the grant the owner releases it too,
         * which counts once).
         */
        private void cancel(Waiter w) {
            boolean removed;
            FlowSlot slot;
            synchronized (this) {
                removed = queue.remove(w);
                if (removed) {
                    metrics.dequeued(model, w.request);
                }
                slot = w.slot;
                if (!removed && slot == null && w.asking && !w.cancelled) {
                    removed = true; // leased() gives back what the gate answers
                }
                if (removed) {
                    w.cancelled = true;
                }
            }
            if (removed) {
                if (w.expiry != null) {
                    w.expiry.dispose();
                }
                metrics.cancelled(model, w.request);
            } else if (slot != null) {
                slot.release();
            }
        }

        void capacity(Boolean saturated) {
            synchronized (this) {
                pushedSaturated = saturated;
                if (Boolean.FALSE.equals(saturated)) {
                    busyUntilNanos = Long.MIN_VALUE; // news newer than the busy answer
                }
            }
            dispatch();
        }

        void released(Slot slot, boolean wasRouting) {
            synchronized (this) {
                inFlight--;
                if (wasRouting) {
                    routing--;
                }
            }
            dispatch();
        }

        void routed() {
            synchronized (this) {
                routing--;
            }
            dispatch();
        }

        void busy(Duration retryAfter) {
            synchronized (this) {
                long hold = pushedSaturated == null ? Math.min(retryAfter.toNanos(), pollInterval.toNanos())
                        : retryAfter.toNanos();
                long until = nowNanos() + Math.max(0, hold);
                if (until > busyUntilNanos) {
                    busyUntilNanos = until;
                    if (busyTimer != null) {
                        busyTimer.dispose();
                    }
                    busyTimer = scheduler.schedule(this::dispatch, Math.max(0, hold), TimeUnit.NANOSECONDS);
                }
            }
        }

        synchronized int queued() {
            return queue.size();
        }

        synchronized int inFlight() {
            return inFlight;
        }

        synchronized Map<String, Object> view() {
            long now = nowNanos();
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("queued", queue.size());
            m.put("in_flight", inFlight);
            m.put("routing", routing);
            m.put("capacity_stream", pushedSaturated == null ? "down" : "up");
            m.put("router_saturated", pushedSaturated);
            m.put("busy_hold_ms", Math.max(0, (busyUntilNanos - now) / 1_000_000));
            m.put("saturated", !dispatchable(now));
            m.put("limits", Map.of("max_in_flight", limits.maxInFlight(), "max_queued", limits.maxQueued(),
                    "max_routing", limits.maxRouting(), "queue_timeout_ms", limits.queueTimeout().toMillis()));
            Map<String, Object> bands = new LinkedHashMap<>();
            queue.view().forEach((band, flows) -> {
                Map<String, Object> fl = new LinkedHashMap<>();
                flows.forEach((id, f) -> fl.put(id, Map.of("waiting", f.waiting(), "deficit", f.deficit(),
                        "weight", f.weight(), "oldest_wait_ms", (now - f.oldestEnqueuedNanos()) / 1_000_000)));
                bands.put(band.label(), Map.of("waiting", queue.size(band), "flows", fl));
            });
            m.put("bands", bands);
            return m;
        }
    }

    private static final class Slot implements FlowSlot {
        private final ModelFlow flow;
        private final Duration waited;
        private final TenantGate.Lease lease;
        private final AtomicBoolean routed = new AtomicBoolean();
        private final AtomicBoolean released = new AtomicBoolean();

        Slot(ModelFlow flow, Duration waited, TenantGate.Lease lease) {
            this.flow = flow;
            this.waited = waited;
            this.lease = lease;
        }

        @Override
        public void routed() {
            if (!released.get() && routed.compareAndSet(false, true)) {
                flow.routed();
            }
        }

        @Override
        public void release() {
            if (released.compareAndSet(false, true)) {
                lease.release();
                flow.released(this, routed.compareAndSet(false, true));
            }
        }

        @Override
        public void busy(Duration retryAfter) {
            if (!released.get()) {
                flow.busy(retryAfter);
            }
            release();
        }

        @Override
        public Duration waited() {
            return waited;
        }
    }

}
