package io.flotilla.worker.kvbm;

/**
 * Where the lower tiers' byte copies run: never the engine's step thread nor a request's thread.
 * {@link TierThread} in production; tests run jobs by hand ({@code ManualTierIo}).
 */
public interface TierIo extends AutoCloseable {

    /**
     * Runs {@code job} later, off the caller's thread. Urgent jobs (onboarding, which a request waits
     * for) run before queued non-urgent ones (offloads).
     */
    void execute(Runnable job, boolean urgent);

    /** Stops taking jobs and waits (bounded) for the running one; queued jobs are dropped. */
    @Override
    void close();
}
