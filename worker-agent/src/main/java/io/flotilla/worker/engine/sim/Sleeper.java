package io.flotilla.worker.engine.sim;

import java.util.concurrent.locks.LockSupport;

/**
 * How the engine driver waits out a step. Injected so that tests advance a {@link ManualClock}
 * instead of sleeping.
 */
public interface Sleeper {

    /** A monotonic time in nanoseconds, as {@link System#nanoTime()}. */
    long nanoTime();

    /** Waits at least {@code nanos} nanoseconds; throws when the thread is interrupted. */
    void sleepNanos(long nanos) throws InterruptedException;

    /**
     * Real time. Parks instead of {@code Thread.sleep}, which rounds sub-millisecond sleeps up to a
     * whole millisecond and would cap a sped-up engine at 1000 steps a second.
     */
    Sleeper SYSTEM = new Sleeper() {
        @Override
        public long nanoTime() {
            return System.nanoTime();
        }

        @Override
        public void sleepNanos(long nanos) throws InterruptedException {
            long deadline = System.nanoTime() + nanos;
            for (long left = nanos; left > 0; left = deadline - System.nanoTime()) {
                LockSupport.parkNanos(left);
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
            }
        }
    };
}
