package io.flotilla.gateway.flow;

import java.util.Comparator;

/**
 * One request known to a {@link FlowState}: queued, or granted and asking the gate. Ordered inside its
 * flow by deadline (EDF), then by arrival. {@code who} is the driver's handle for it; the flags belong to
 * the state, which alone reads and writes them.
 */
final class Waiter<H> {

    /** Earliest deadline first; equal deadlines in arrival order. */
    static final Comparator<Waiter<?>> EDF = Comparator.<Waiter<?>>comparingLong(w -> w.request.deadlineNanos())
            .thenComparingLong(w -> w.seq);

    final H who;
    final FlowRequest request;
    final long seq;
    final long enqueuedNanos;
    /** Granted, waiting for the gate's answer (neither queued nor holding a slot). */
    boolean asking;
    /** The subscriber left while the gate was asked; counted as cancelled once. */
    boolean cancelled;
    /** Its deadline timer was asked for (once per waiter, whether or not it is queued now). */
    boolean timerArmed;

    Waiter(H who, FlowRequest request, long seq, long enqueuedNanos) {
        this.who = who;
        this.request = request;
        this.seq = seq;
        this.enqueuedNanos = enqueuedNanos;
    }
}
