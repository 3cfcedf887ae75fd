package io.flotilla.gateway.flow;

import java.time.Duration;

/**
 * What a {@link FlowState} asks its driver to do after an event; {@code who} is the driver's handle of
 * a request. The driver applies them in order, and nothing else: every decision is the state's.
 */
sealed interface FlowEffect<H> {

    /** Complete the request with a slot; {@code leased}: it holds a place from the gate to give back with it. */
    record Grant<H>(H who, Duration waited, boolean leased) implements FlowEffect<H> {
    }

    /** Fail the request with {@code why}. */
    record Reject<H>(H who, FlowRejection why) implements FlowEffect<H> {
    }

    /** Tell the state {@code expire(who)} after {@code delayNanos}. */
    record ArmExpiry<H>(H who, long delayNanos) implements FlowEffect<H> {
    }

    /** Ask the gate for a place of {@code flow} and tell the state its answer ({@code gateAnswered}). */
    record AskGate<H>(H who, String flow) implements FlowEffect<H> {
    }

    /** The gate's place answered for a request that left meanwhile: release it. */
    record ReturnLease<H>(H who) implements FlowEffect<H> {
    }

    /** The request entered the queue (the queued gauge). */
    record Queued<H>(H who) implements FlowEffect<H> {
    }

    /** The request left the queue, whatever for (the queued gauge). */
    record Left<H>(H who) implements FlowEffect<H> {
    }

    /** The request's subscriber left before its grant: drop its timer, count it cancelled. */
    record Cancelled<H>(H who) implements FlowEffect<H> {
    }

    /** Tell the state {@code busyEnded()} after {@code delayNanos}, instead of any earlier such timer of the model. */
    record ArmBusyTimer<H>(long delayNanos) implements FlowEffect<H> {
    }
}
