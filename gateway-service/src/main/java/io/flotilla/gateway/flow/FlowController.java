package io.flotilla.gateway.flow;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import io.micrometer.observation.ObservationRegistry;
import reactor.core.observability.micrometer.Micrometer;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.function.IntSupplier;
import java.util.function.ToLongFunction;

/**
 * Flow control between admission and Route, per model: the driver of the models' {@link FlowState}s.
 * A request is dispatched at once when its model's pool is not saturated, else it waits in the model's
 * queue until capacity returns or its deadline passes; {@link FlowState} says what saturated means and
 * decides every grant, rejection and timer. This class only turns calls, timers and gate answers into
 * events, feeds them to the state with the time, and applies the effects to {@link MonoSink}s, timers,
 * the gate and the metrics.
 *
 * <p><b>One event at a time, without a lock</b>: every event goes into a lock-free queue, and the thread
 * that finds nobody draining it drains it (a work-in-progress counter, as Reactor's serialized sinks do)
 * until it is empty. Events submitted while a drain runs — from another thread, or from a sink callback
 * of the drain itself (a request released at once) — are run by that drain, after the current one, so
 * the state never sees two events at once nor one inside another. Why not a single-threaded executor:
 * the caller's thread runs its own event when no other is running, so an admit into an idle model is
 * granted without a thread hop on the request path, and tests on virtual time see its effect as soon as
 * the call returns; there is also no thread to own and stop. Only the drain touches the state, the
 * timers it armed and the requests' handles; readers on other threads see counts published after each
 * event, and {@link #view()} runs as an event.
 *
 * <p><b>Why not a Resilience4j Bulkhead</b>: a {@code SemaphoreBulkhead} is a semaphore with a bounded
 * wait. It has one FIFO of waiting threads (reactor's operator does not even wait: it rejects at once),
 * a single wait time for everyone, no per-request deadline, no priorities, no fairness between callers,
 * no displacement and no way to make a permit available because a remote pool said so. Flow control
 * needs all of these, so the admission limit became the {@code maxInFlight} signal, and there is one
 * queue, not two.
 *
 * <p><b>Per-flow in-flight limits</b> ({@link TenantGate}, across models and, with a shared store,
 * across gateway replicas) are part of the dispatch decision: dispatch passes over a flow the gate says
 * is at its limit, so its requests wait (and may expire) in the queue and never take another flow's
 * turn (see {@link FlowState}). The gate's answers come back as events; its word that a flow may try
 * again dispatches every model.
 */
public final class FlowController {

    private static final Logger log = LoggerFactory.getLogger(FlowController.class);

    /** One request as the driver holds it; its mutable fields are touched by the drain only. */
    private static final class Ticket {
        final FlowRequest request;
        final MonoSink<FlowSlot> sink;
        Disposable expiry;
        TenantGate.Lease lease;
        Slot slot;

        Ticket(FlowRequest request, MonoSink<FlowSlot> sink) {
            this.request = request;
            this.sink = sink;
        }

        void disarm() {
            if (expiry != null) {
                expiry.dispose();
                expiry = null;
            }
        }

        @Override
        public String toString() {
            return request.id();
        }
    }

    /**
     * A model's counts as readers on other threads see them, published after each event; the in-flight
     * gauge reads it, and {@code published} holds it strongly (a gauge holds its object weakly).
     */
    private static final class Counts implements IntSupplier {
        volatile int queued;
        volatile int inFlight;

        @Override
        public int getAsInt() {
            return inFlight;
        }
    }

    /** The observation of an admission, from asking to a slot or a refusal. */
    public static final String WAIT_OBSERVATION = "flotilla.gateway.flow.queue";

    private final ObservationRegistry observations;
    private final Function<String, FlowLimits> limits;
    private final Scheduler scheduler;
    private final FlowMetrics metrics;
    private final TenantGate gate;
    private final GateView gateView;
    private final FlowStates<Ticket> states;
    private final Map<String, Counts> published = new ConcurrentHashMap<>();
    private final ConcurrentLinkedQueue<Runnable> events = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pending = new AtomicInteger();
    /** The thread draining now, null between drains (for {@link #view()} called from a sink callback). */
    private volatile Thread drainer;
    /** Drain only: each model's armed busy-hold timer. */
    private final Map<String, Disposable> busyTimers = new HashMap<>();

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
        this(limits, scheduler, metrics, quantum, weights, pollInterval, gate, ObservationRegistry.NOOP);
    }

    /**
     * As the other constructors; each admission's wait is an observation of {@code observations}
     * ({@value #WAIT_OBSERVATION}: a span of the request's trace and a timer).
     */
    public FlowController(Function<String, FlowLimits> limits, Scheduler scheduler, FlowMetrics metrics, long quantum,
                          ToLongFunction<String> weights, Duration pollInterval, TenantGate gate,
                          ObservationRegistry observations) {
        this.observations = observations;
        this.limits = limits;
        this.scheduler = scheduler;
        this.metrics = metrics;
        this.gate = gate;
        this.gateView = GateView.of(gate);
        this.states = new FlowStates<>(limits, quantum, weights, pollInterval);
        gate.onMayTry(flow -> submit(() -> apply(states.dispatchAll(nowNanos(), gateView))));
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
        Mono<FlowSlot> slot = Mono.create(sink -> {
            Ticket t = new Ticket(request, sink);
            String model = request.model();
            submit(() -> apply(model, states.model(model).admit(t, request, readmission, nowNanos(), gateView)));
            // One callback for every state: queued, asking the gate or granted (a grant the subscriber never
            // saw is released here).
            sink.onCancel(() -> submit(() -> {
                apply(model, states.model(model).cancel(t));
                if (t.slot != null) {
                    t.slot.release();
                }
            }));
        });
        // the request's observation is in the subscriber's Reactor context: the wait becomes a span of its trace
        return observations.isNoop() ? slot : slot.name(WAIT_OBSERVATION).tap(Micrometer.observation(observations));
    }

    /**
     * The router's view of {@code model}, pushed over {@code WatchCapacity}; {@code saturated == null}
     * means no stream is up any more (back to the gateway's own signals and the poll).
     */
    public void capacity(String model, Boolean saturated) {
        submit(() -> apply(model, states.model(model).capacity(saturated, nowNanos(), gateView)));
    }

    /** Every model the controller has seen. */
    public List<String> models() {
        return List.copyOf(published.keySet());
    }

    public int queued(String model) {
        Counts c = published.get(model);
        return c == null ? 0 : c.queued;
    }

    public int inFlight(String model) {
        Counts c = published.get(model);
        return c == null ? 0 : c.inFlight;
    }

    /** The queues as {@code GET /actuator/flow} shows them, read between two events. */
    public Map<String, Object> view() {
        if (drainer == Thread.currentThread()) {
            return viewNow();
        }
        CompletableFuture<Map<String, Object>> view = new CompletableFuture<>();
        submit(() -> view.complete(viewNow()));
        return view.join(); // the drain waits on nothing but this process's callbacks
    }

    private Map<String, Object> viewNow() {
        long now = nowNanos();
        Map<String, Object> out = new LinkedHashMap<>();
        states.models().forEach((name, state) -> out.put(name, state.view(now)));
        return out;
    }

    /** Runs {@code event} after every event submitted before it, on this thread if no drain is running. */
    private void submit(Runnable event) {
        events.offer(event);
        if (pending.getAndIncrement() != 0) {
            return; // the running drain takes it
        }
        int missed = 1;
        do {
            drainer = Thread.currentThread();
            Runnable next;
            while ((next = events.poll()) != null) {
                try {
                    next.run();
                } catch (Throwable e) { // nothing may stop the drain: every later event would wait forever
                    log.error("flow control event failed; the state stays as the event left it", e);
                }
                publish();
            }
            drainer = null;
            missed = pending.addAndGet(-missed);
        } while (missed != 0);
    }

    private void publish() {
        states.models().forEach((name, state) -> {
            Counts c = published.get(name);
            if (c == null) {
                c = new Counts();
                published.put(name, c);
                metrics.inFlightGauge(name, c);
            }
            c.queued = state.queued();
            c.inFlight = state.inFlight();
        });
    }

    private void apply(String model, List<FlowEffect<Ticket>> effects) {
        for (FlowEffect<Ticket> e : effects) {
            applyOne(model, e);
        }
    }

    private void apply(List<FlowStates.Effect<Ticket>> effects) {
        for (FlowStates.Effect<Ticket> e : effects) {
            applyOne(e.model(), e.effect());
        }
    }

    /** One effect; a failing sink callback does not keep the others of its event from being applied. */
    private void applyOne(String model, FlowEffect<Ticket> effect) {
        try {
            if (effect instanceof FlowEffect.Grant<Ticket> g) {
                grant(model, g);
            } else if (effect instanceof FlowEffect.Reject<Ticket> r) {
                reject(model, r.who(), r.why());
            } else if (effect instanceof FlowEffect.ArmExpiry<Ticket> a) {
                a.who().expiry = scheduler.schedule(
                        () -> submit(() -> apply(model, states.model(model).expire(a.who(), nowNanos()))),
                        a.delayNanos(), TimeUnit.NANOSECONDS);
            } else if (effect instanceof FlowEffect.AskGate<Ticket> a) {
                ask(model, a.who(), a.flow());
            } else if (effect instanceof FlowEffect.ReturnLease<Ticket> r) {
                r.who().lease.release();
            } else if (effect instanceof FlowEffect.Queued<Ticket> q) {
                metrics.enqueued(model, q.who().request);
            } else if (effect instanceof FlowEffect.Left<Ticket> l) {
                metrics.dequeued(model, l.who().request);
            } else if (effect instanceof FlowEffect.Cancelled<Ticket> c) {
                c.who().disarm();
                metrics.cancelled(model, c.who().request);
            } else if (effect instanceof FlowEffect.ArmBusyTimer<Ticket> b) {
                armBusyTimer(model, b.delayNanos());
            }
        } catch (RuntimeException e) {
            log.error("flow control effect {} for '{}' failed", effect, model, e);
        }
    }

    private void grant(String model, FlowEffect.Grant<Ticket> g) {
        Ticket t = g.who();
        t.disarm();
        t.slot = new Slot(this, model, g.waited(), g.leased() ? t.lease : TenantGate.Lease.NONE);
        metrics.dispatched(model, t.request, g.waited());
        t.sink.success(t.slot);
    }

    private void reject(String model, Ticket t, FlowRejection why) {
        t.disarm();
        FlowRejected error = new FlowRejected(model, why);
        switch (error.reason()) {
            case QUEUE_FULL -> metrics.rejected(model, t.request);
            case QUEUE_TIMEOUT -> metrics.expired(model, t.request);
            case DISPLACED -> metrics.displaced(model, t.request);
            case INVALID_HEADER, PRIORITY_NOT_ALLOWED ->
                    throw new IllegalStateException("a policy refusal cannot come from the queue: " + why);
        }
        t.sink.error(error);
    }

    /** The gate's answer comes back as an event, whichever thread completes it. */
    private void ask(String model, Ticket t, String flow) {
        gate.acquire(flow).whenComplete((lease, e) -> submit(() -> {
            t.lease = e == null ? lease : null;
            apply(states.gateAnswered(model, t, t.lease != null, nowNanos(), gateView));
        }));
    }

    private void armBusyTimer(String model, long delayNanos) {
        Disposable before = busyTimers.put(model, scheduler.schedule(
                () -> submit(() -> apply(model, states.model(model).dispatch(nowNanos(), gateView))),
                delayNanos, TimeUnit.NANOSECONDS));
        if (before != null) {
            before.dispose();
        }
    }

    /** A granted place; its calls become events of its model, each counted once. */
    private static final class Slot implements FlowSlot {
        private final FlowController flow;
        private final String model;
        private final Duration waited;
        private final TenantGate.Lease lease;
        private final AtomicBoolean routed = new AtomicBoolean();
        private final AtomicBoolean released = new AtomicBoolean();

        Slot(FlowController flow, String model, Duration waited, TenantGate.Lease lease) {
            this.flow = flow;
            this.model = model;
            this.waited = waited;
            this.lease = lease;
        }

        @Override
        public void routed() {
            if (!released.get() && routed.compareAndSet(false, true)) {
                flow.submit(() -> flow.apply(model, flow.states.model(model).routed(flow.nowNanos(), flow.gateView)));
            }
        }

        @Override
        public void release() {
            if (released.compareAndSet(false, true)) {
                lease.release();
                boolean wasRouting = routed.compareAndSet(false, true);
                flow.submit(() -> flow.apply(model,
                        flow.states.model(model).released(wasRouting, flow.nowNanos(), flow.gateView)));
            }
        }

        @Override
        public void busy(Duration retryAfter) {
            if (!released.get()) {
                flow.submit(() -> flow.apply(model, flow.states.model(model).busy(retryAfter, flow.nowNanos())));
            }
            release();
        }

        @Override
        public Duration waited() {
            return waited;
        }
    }
}
