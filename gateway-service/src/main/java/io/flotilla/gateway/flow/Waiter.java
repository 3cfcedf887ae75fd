package io.flotilla.gateway.flow;

import reactor.core.Disposable;
import reactor.core.publisher.MonoSink;

import java.util.Comparator;

/**
 * One queued request. Ordered inside its flow by deadline (EDF), then by arrival. The controller's
 * fields ({@code expiry}, {@code slot}, {@code asking}, {@code cancelled}) are guarded by the model's lock.
 */
final class Waiter {

    /** Earliest deadline first; equal deadlines in arrival order. */
    static final Comparator<Waiter> EDF = Comparator.<Waiter>comparingLong(w -> w.request.deadlineNanos())
            .thenComparingLong(w -> w.seq);

    final FlowRequest request;
    final long seq;
    final long enqueuedNanos;
    final MonoSink<FlowSlot> sink;
    Disposable expiry;
    FlowSlot slot;
    /** Granted, waiting for the {@link TenantGate}'s answer (neither queued nor holding a slot). */
    boolean asking;
    /** The subscriber left; counted as cancelled once. */
    boolean cancelled;

    Waiter(FlowRequest request, long seq, long enqueuedNanos, MonoSink<FlowSlot> sink) {
        this.request = request;
        this.seq = seq;
        this.enqueuedNanos = enqueuedNanos;
        this.sink = sink;
    }
}
