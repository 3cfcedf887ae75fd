package io.flotilla.gateway.flow;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToLongFunction;

/**
 * The flow control of one model as a state machine: each event (admit, capacity, busy, busy hold over,
 * released, routed, gate answer, expire, cancel, dispatch) changes the state and returns the
 * {@link FlowEffect}s its driver must apply. No locks, no clock, no I/O: time and the gate's reads come
 * in with the events. {@code H} is the driver's handle of a request, compared by {@code equals}.
 *
 * <p>Saturated means any of: the router's last pushed capacity said so (while a capacity stream is
 * up); a Route answered busy less than its retry-after ago (without a stream, at most the poll
 * interval); {@code maxInFlight} requests are dispatched and unfinished; {@code maxRouting} dispatched
 * requests still wait for their Route's answer. Every event that can end saturation dispatches.
 *
 * <p>Shedding happens only at the edges: a full queue rejects ({@code QueueFull}) unless the arriving
 * request's band is higher than some waiter's, whose lowest band's latest-deadline waiter is displaced;
 * a waiter whose deadline passes leaves ({@code QueueTimeout}); a cancelled waiter leaves at once.
 *
 * <p>Invariants: {@code 0 ≤ routing ≤ inFlight ≤ maxInFlight} (the counts of the driver's slots); a
 * request is queued, asking the gate, granted, rejected or cancelled, never two of these, and gets at
 * most one {@code Grant} or {@code Reject}; a waiter's timer is armed once.
 *
 * <p>Per-flow limits: a granted request of a flow the gate limits reserves its model place first
 * ({@code inFlight}, {@code routing}), then the gate is asked, at most one ask per flow at a time across
 * models (the {@code asking} set, shared by the models' states of one {@link FlowStates}); while asked,
 * dispatch passes over the flow. A place completes the grant; none gives the reservation back and
 * queues the request again with its own deadline.
 */
final class FlowState<H> {

    private final String model;
    private final FlowLimits limits;
    private final long pollIntervalNanos;
    private final FlowQueue<H> queue;
    private final Set<String> asking;
    /** Requests queued or asking the gate, by handle. */
    private final Map<H, Waiter<H>> waiters = new HashMap<>();
    private int inFlight;
    private int routing;
    /** The last pushed saturation; null while no capacity stream is up. */
    private Boolean pushedSaturated;
    private long busyUntilNanos = Long.MIN_VALUE;
    private long seq;

    /**
     * @param quantum DRR tokens per round of a flow of weight 1
     * @param weights DRR weight of a flow id
     * @param asking  flows with a gate ask in flight, shared by every model of the same gate
     */
    FlowState(String model, FlowLimits limits, long quantum, ToLongFunction<String> weights, Duration pollInterval,
              Set<String> asking) {
        this.model = model;
        this.limits = limits;
        this.pollIntervalNanos = pollInterval.toNanos();
        this.queue = new FlowQueue<>(quantum, weights);
        this.asking = asking;
    }

    /**
     * A request asks for a slot: granted at once when the model is not saturated and nothing of its band
     * or higher waits, else queued (or shed).
     *
     * @param readmission the request was dispatched before and its Route answered busy: it re-enters even
     *                    a full queue (it had a place before)
     */
    List<FlowEffect<H>> admit(H who, FlowRequest r, boolean readmission, long now, GateView gate) {
        List<FlowEffect<H>> out = new ArrayList<>(4);
        Waiter<H> w = new Waiter<>(who, r, ++seq, now);
        if (queue.size(r.priority()) == 0 && !higherWaiting(r.priority()) && dispatchable(now)
                && (gate == GateView.NONE || eligible(r.flow(), gate))) {
            grant(w, now, gate, out);
            return out;
        }
        if (r.deadlineNanos() <= now) {
            out.add(new FlowEffect.Reject<>(who, new FlowRejection.QueueTimeout(0)));
            return out;
        }
        if (!readmission && queue.size() >= limits.maxQueued()) {
            Waiter<H> victim = queue.displaceable(r.priority());
            if (victim == null) {
                out.add(new FlowEffect.Reject<>(who, new FlowRejection.QueueFull(queue.size(), limits.maxQueued())));
                return out;
            }
            queue.remove(victim);
            waiters.remove(victim.who);
            out.add(new FlowEffect.Left<>(victim.who));
            out.add(new FlowEffect.Reject<>(victim.who,
                    new FlowRejection.Displaced(r.priority(), victim.request.priority())));
        }
        enqueue(w, now, out);
        dispatch(now, gate, out);
        return out;
    }

    /** The router's capacity push; {@code null}: no stream is up any more. */
    List<FlowEffect<H>> capacity(Boolean saturated, long now, GateView gate) {
        pushedSaturated = saturated;
        if (Boolean.FALSE.equals(saturated)) {
            busyUntilNanos = Long.MIN_VALUE; // news newer than the busy answer
        }
        return dispatch(now, gate);
    }

    /** A Route answered busy: hold dispatch for {@code retryAfter} (at most the poll interval without a stream). */
    List<FlowEffect<H>> busy(Duration retryAfter, long now) {
        long hold = Math.max(0, pushedSaturated == null ? Math.min(retryAfter.toNanos(), pollIntervalNanos)
                : retryAfter.toNanos());
        long until = now + hold;
        if (until <= busyUntilNanos) {
            return List.of();
        }
        busyUntilNanos = until;
        return List.of(new FlowEffect.ArmBusyTimer<>(hold));
    }

    /** A slot was released; {@code wasRouting}: its Route had not answered yet. */
    List<FlowEffect<H>> released(boolean wasRouting, long now, GateView gate) {
        inFlight--;
        if (wasRouting) {
            routing--;
        }
        return dispatch(now, gate);
    }

    /** A slot's Route answered. */
    List<FlowEffect<H>> routed(long now, GateView gate) {
        routing--;
        return dispatch(now, gate);
    }

    /**
     * The gate answered the ask of a granted request: a place ({@code leased}) completes its grant; none
     * gives the reservation back and queues it again, unless it left or its deadline passed meanwhile.
     * The caller dispatches every model afterwards (the flow's next ask, and the room the reservation held).
     */
    List<FlowEffect<H>> gateAnswered(H who, boolean leased, long now) {
        Waiter<H> w = waiters.get(who);
        if (w == null || !w.asking) {
            throw new IllegalStateException("a gate answer for a request of '" + model + "' that did not ask: " + who);
        }
        List<FlowEffect<H>> out = new ArrayList<>(2);
        w.asking = false;
        asking.remove(w.request.flow());
        if (leased && !w.cancelled) {
            complete(w, now, true, out);
            return out;
        }
        inFlight--;
        routing--;
        if (w.cancelled) {
            waiters.remove(who);
            if (leased) {
                out.add(new FlowEffect.ReturnLease<>(who));
            }
        } else if (now >= w.request.deadlineNanos()) {
            waiters.remove(who);
            out.add(new FlowEffect.Reject<>(who, new FlowRejection.QueueTimeout(now - w.enqueuedNanos)));
        } else {
            enqueue(w, now, out);
        }
        return out;
    }

    /** The timer of {@code who} fired: it leaves when it still waits in the queue. */
    List<FlowEffect<H>> expire(H who, long now) {
        Waiter<H> w = waiters.get(who);
        if (w == null || w.asking || !queue.remove(w)) {
            return List.of(); // granted, displaced, cancelled or asking the gate meanwhile
        }
        waiters.remove(who);
        return List.of(new FlowEffect.Left<>(who),
                new FlowEffect.Reject<>(who, new FlowRejection.QueueTimeout(now - w.enqueuedNanos)));
    }

    /**
     * The subscriber of {@code who} left: a queued request leaves the queue, one asking the gate gives
     * back what the gate answers. Nothing for a request granted or rejected already (a granted one's slot
     * is the driver's to release).
     */
    List<FlowEffect<H>> cancel(H who) {
        Waiter<H> w = waiters.get(who);
        if (w == null || w.cancelled) {
            return List.of();
        }
        w.cancelled = true;
        if (w.asking) {
            return List.of(new FlowEffect.Cancelled<>(who)); // forgotten when the gate answers
        }
        queue.remove(w);
        waiters.remove(who);
        return List.of(new FlowEffect.Left<>(who), new FlowEffect.Cancelled<>(who));
    }

    /** Grants waiters while the pool is not saturated (the busy hold ended, a flow may try its gate again). */
    List<FlowEffect<H>> dispatch(long now, GateView gate) {
        List<FlowEffect<H>> out = new ArrayList<>(0);
        dispatch(now, gate, out);
        return out;
    }

    private void dispatch(long now, GateView gate, List<FlowEffect<H>> out) {
        while (queue.size() > 0 && dispatchable(now)) {
            Waiter<H> w = gate == GateView.NONE ? queue.poll() : queue.poll(flow -> eligible(flow, gate));
            if (w == null) {
                break; // only flows at their in-flight limit wait
            }
            out.add(new FlowEffect.Left<>(w.who));
            grant(w, now, gate, out);
        }
    }

    private void enqueue(Waiter<H> w, long now, List<FlowEffect<H>> out) {
        queue.add(w);
        waiters.put(w.who, w);
        out.add(new FlowEffect.Queued<>(w.who));
        if (!w.timerArmed) {
            w.timerArmed = true;
            out.add(new FlowEffect.ArmExpiry<>(w.who, Math.max(0, w.request.deadlineNanos() - now)));
        }
    }

    /** Counts the slot; a request of a limited flow asks the gate before its grant completes. */
    private void grant(Waiter<H> w, long now, GateView gate, List<FlowEffect<H>> out) {
        inFlight++;
        routing++;
        String flow = w.request.flow();
        if (gate.limited().test(flow)) {
            w.asking = true;
            asking.add(flow);
            waiters.put(w.who, w);
            out.add(new FlowEffect.AskGate<>(w.who, flow));
            return;
        }
        complete(w, now, false, out);
    }

    private void complete(Waiter<H> w, long now, boolean leased, List<FlowEffect<H>> out) {
        waiters.remove(w.who);
        out.add(new FlowEffect.Grant<>(w.who, Duration.ofNanos(now - w.enqueuedNanos), leased));
    }

    private boolean eligible(String flow, GateView gate) {
        return !asking.contains(flow) && gate.mayTry().test(flow);
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

    private boolean dispatchable(long now) {
        return inFlight < limits.maxInFlight() && routing < limits.maxRouting()
                && !Boolean.TRUE.equals(pushedSaturated) && now >= busyUntilNanos;
    }

    int queued() {
        return queue.size();
    }

    int inFlight() {
        return inFlight;
    }

    int routing() {
        return routing;
    }

    /** The model as {@code GET /actuator/flow} shows it. */
    Map<String, Object> view(long now) {
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
