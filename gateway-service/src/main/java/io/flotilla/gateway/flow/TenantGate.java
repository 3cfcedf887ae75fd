package io.flotilla.gateway.flow;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;

/**
 * The per-flow in-flight limit as {@link FlowController}'s dispatch sees it: a flow (API key id, or
 * tenant) at its limit is passed over by dispatch and its requests wait in the queue; they are never
 * rejected for it. A place is held from dispatch until the request's flow slot is released.
 *
 * <p>Contract: {@link #limited} and {@link #mayTry} are cheap and non-blocking (dispatch calls them
 * inside the flow driver's drain, which runs every model's events); {@link #acquire} never completes
 * exceptionally (a store that fails falls back to this process's own count inside the implementation);
 * after an acquire that found the flow full, {@link #mayTry} stays false for it until a place may have
 * freed, and then the listener given to {@link #onMayTry} is called with the flow, from any thread.
 */
public interface TenantGate {

    /** A held place; {@link #release} is idempotent. */
    interface Lease {
        Lease NONE = () -> { };

        void release();
    }

    /** No flow has a limit. */
    TenantGate NONE = new TenantGate() {
        @Override
        public boolean limited(String flow) {
            return false;
        }

        @Override
        public boolean mayTry(String flow) {
            return true;
        }

        @Override
        public CompletionStage<Lease> acquire(String flow) {
            return CompletableFuture.completedFuture(Lease.NONE);
        }

        @Override
        public void onMayTry(Consumer<String> listener) {
        }
    };

    /** Whether {@code flow} has an in-flight limit at all (else dispatch takes no place for it). */
    boolean limited(String flow);

    /** Whether dispatch may try to take a place for {@code flow} now. */
    boolean mayTry(String flow);

    /** A place for one request of {@code flow}, or {@code null} when the flow is at its limit. */
    CompletionStage<Lease> acquire(String flow);

    /** {@code listener} is told of each flow that dispatch may try again. */
    void onMayTry(Consumer<String> listener);
}
