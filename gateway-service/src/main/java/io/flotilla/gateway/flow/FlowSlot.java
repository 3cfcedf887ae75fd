package io.flotilla.gateway.flow;

import java.time.Duration;

/**
 * A dispatched request's place among its model's in-flight requests. {@link #routed()} says its Route
 * (or the gateway's own pick) answered, so another waiter may start routing; {@link #release()} ends
 * it when the request ends, and {@link #busy} when the router answered busy (the request then asks
 * {@link FlowController#admit} again with its original deadline). All three are idempotent, and
 * {@code release}/{@code busy} imply {@code routed}.
 */
public interface FlowSlot {

    void routed();

    void release();

    /** The router said the pool is busy: give the slot back and hold dispatch for at most {@code retryAfter}. */
    void busy(Duration retryAfter);

    /** How long the request waited in the queue before this slot (zero when dispatched at once). */
    Duration waited();
}
