package io.flotilla.gateway.admission;

import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.publisher.MonoSink;
import reactor.core.scheduler.Scheduler;

import java.util.ArrayDeque;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * Per-model admission: at most {@code maxInFlight} requests of a model hold a {@link Permit}; up to
 * {@code maxQueued} more wait in arrival order, each for at most {@code queueTimeout}.
 *
 * <p>Invariants, per model, under its gate's lock: {@code inFlight <= maxInFlight}; a waiter is
 * either queued, granted (and counted in {@code inFlight}), expired or cancelled, never two of
 * these; a permit released twice counts once. A waiter whose subscriber cancels leaves the queue; one
 * cancelled after its grant gives the slot back at once. Time comes from the injected scheduler, so
 * tests move it instead of sleeping.
 */
public final class AdmissionControl {

    /** A slot of one model; {@link #release()} is idempotent. */
    public interface Permit {
        void release();
    }

    private final Function<String, AdmissionLimits> limits;
    private final Scheduler timer;
    private final Map<String, Gate> gates = new ConcurrentHashMap<>();

    public AdmissionControl(Function<String, AdmissionLimits> limits, Scheduler timer) {
        this.limits = limits;
        this.timer = timer;
    }

    /**
     * A permit for one request of {@code model}: at once when a slot is free, after waiting when the
     * queue has room; {@link AdmissionRejected} when the queue is full or the wait times out.
     */
    public Mono<Permit> admit(String model) {
        return Mono.create(sink -> gates.computeIfAbsent(model, m -> new Gate(limits.apply(m))).admit(sink));
    }

    /** Requests of {@code model} holding a permit. */
    public int inFlight(String model) {
        Gate g = gates.get(model);
        return g == null ? 0 : g.inFlight();
    }

    /** Requests of {@code model} waiting for a permit. */
    public int queued(String model) {
        Gate g = gates.get(model);
        return g == null ? 0 : g.queued();
    }

    private final class Gate {
        private final AdmissionLimits limits;
        private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
        private int inFlight;

        Gate(AdmissionLimits limits) {
            this.limits = limits;
        }

        void admit(MonoSink<Permit> sink) {
            Waiter w;
            synchronized (this) {
                if (inFlight < limits.maxInFlight()) {
                    inFlight++;
                    sink.success(new GatePermit(this));
                    return;
                }
                if (queue.size() >= limits.maxQueued()) {
                    sink.error(new AdmissionRejected(AdmissionRejected.Reason.QUEUE_FULL, "all " + limits.maxInFlight()
                            + " slots are busy and " + queue.size() + " requests are already waiting"));
                    return;
                }
                w = new Waiter(sink);
                queue.addLast(w);
            }
            w.expiry = timer.schedule(() -> expire(w), limits.queueTimeout().toNanos(), TimeUnit.NANOSECONDS);
            sink.onCancel(() -> cancel(w));
        }

        private void expire(Waiter w) {
            synchronized (this) {
                if (!queue.remove(w)) {
                    return; // granted or cancelled meanwhile
                }
            }
            w.sink.error(new AdmissionRejected(AdmissionRejected.Reason.QUEUE_TIMEOUT,
                    "no slot became free within " + limits.queueTimeout().toMillis() + " ms"));
        }

        private void cancel(Waiter w) {
            boolean wasGranted;
            synchronized (this) {
                wasGranted = !queue.remove(w) && w.granted;
            }
            if (w.expiry != null) {
                w.expiry.dispose();
            }
            if (wasGranted) {
                w.permit.release(); // cancelled after the grant: the slot goes back at once
            }
        }

        void release() {
            Waiter next;
            synchronized (this) {
                next = queue.pollFirst();
                if (next == null) {
                    inFlight--;
                    return;
                }
                next.granted = true; // the slot passes to the waiter; inFlight stays the same
                next.permit = new GatePermit(this);
            }
            if (next.expiry != null) {
                next.expiry.dispose();
            }
            next.sink.success(next.permit);
        }

        synchronized int inFlight() {
            return inFlight;
        }

        synchronized int queued() {
            return queue.size();
        }
    }

    private static final class Waiter {
        final MonoSink<Permit> sink;
        volatile Disposable expiry;
        boolean granted;
        GatePermit permit;

        Waiter(MonoSink<Permit> sink) {
            this.sink = sink;
        }
    }

    private static final class GatePermit implements Permit {
        private final Gate gate;
        private final AtomicBoolean released = new AtomicBoolean();

        GatePermit(Gate gate) {
            this.gate = gate;
        }

        @Override
        public void release() {
            if (released.compareAndSet(false, true)) {
                gate.release();
            }
        }
    }
}
