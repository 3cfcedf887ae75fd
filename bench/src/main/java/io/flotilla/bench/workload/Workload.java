package io.flotilla.bench.workload;

/**
 * A source of requests. Open-loop arrivals come from {@link #next()} in non-decreasing
 * {@code arrivalMs} order and are produced lazily (a trace is read as it is replayed). A closed-loop
 * workload (multi-turn sessions) may answer each completion with a follow-up request.
 *
 * <p>Calls come from one thread (the load generator's dispatcher); implementations need no locking.
 */
public interface Workload extends AutoCloseable {

    /** The next open-loop request, or {@code null} when there are no more. */
    PlannedRequest next();

    /** The request to send {@link FollowUp#delayMs()} after {@code done} completed, or {@code null}. */
    default FollowUp followUp(PlannedRequest done, Completion completion) {
        return null;
    }

    /** Whether the server should be asked to stream generated token ids ({@code return_token_ids}). */
    default boolean wantsOutputTokenIds() {
        return false;
    }

    /** One line naming the workload and its parameters, for reports. */
    String describe();

    @Override
    default void close() {
    }

    /** A request to send {@code delayMs} (workload time) after the previous turn completed. */
    record FollowUp(double delayMs, PlannedRequest request) {
    }
}
