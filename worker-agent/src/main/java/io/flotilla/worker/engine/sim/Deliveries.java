package io.flotilla.worker.engine.sim;

import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The engine's callbacks (token and prefill sinks, KV events, step times, adapter changes), queued while the engine
 * lock is held and run after it is released: in the order they were queued, one at a time, on whichever thread
 * released the lock and found no other thread running them. A sink that is slow, or that calls back into the engine
 * (a finished request submitting the next), then neither holds up the scheduler nor re-enters it.
 *
 * <p>Written here rather than taken from a library: gRPC's {@code SynchronizationContext} has exactly this shape
 * (queue now, drain later, one drainer) but belongs to the transport, which the engines do not depend on, and
 * Guava's sequential executor runs a task as it is queued, which here would be under the lock.
 */
final class Deliveries {

    private static final System.Logger LOG = System.getLogger(Deliveries.class.getName());

    private final Queue<Runnable> queue = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean draining = new AtomicBoolean();

    /** Queues {@code callback}; it runs at the next {@link #drain()}. Any thread. */
    void add(Runnable callback) {
        queue.add(callback);
    }

    /**
     * Runs every queued callback unless another thread is running them (it then runs these too). A callback that
     * queues more (through the engine) has them run by this same drain, after it returns. A callback that throws is
     * logged; the rest still run.
     */
    void drain() {
        while (!queue.isEmpty() && draining.compareAndSet(false, true)) {
            try {
                Runnable next;
                while ((next = queue.poll()) != null) {
                    try {
                        next.run();
                    } catch (RuntimeException e) {
                        LOG.log(System.Logger.Level.WARNING, "an engine callback failed", e);
                    }
                }
            } finally {
                draining.set(false);
            }
        }
    }
}
