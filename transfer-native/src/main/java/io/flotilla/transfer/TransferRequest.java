package io.flotilla.transfer;

import java.time.Duration;
import java.util.Optional;

/**
 * An asynchronous read or write. It becomes DONE when every byte has moved and the attached
 * notification (if any) is queued at the target; ERROR when either side rejected it or a backend
 * failed. Closing it releases its resources (a pending request keeps running).
 */
public interface TransferRequest extends AutoCloseable {

    TransferStatus status();

    /** Waits up to {@code timeout} for a final status and returns the status then (PENDING on timeout). */
    TransferStatus await(Duration timeout) throws InterruptedException;

    /** Returns when DONE; throws the failure on ERROR, and {@link ErrorCode#TIMEOUT} when still pending. */
    default void awaitDone(Duration timeout) throws InterruptedException {
        TransferStatus s = await(timeout);
        if (s == TransferStatus.ERROR) {
            TransferException e = failure().orElseThrow();
            throw new TransferException(e.code(), e.detail(), e);
        }
        if (s == TransferStatus.PENDING) {
            throw new TransferException(ErrorCode.TIMEOUT, "request still pending after " + timeout);
        }
    }

    /**
     * Stops the request if it has not started: it then ends in ERROR ({@link ErrorCode#CANCELLED})
     * and moves no byte. A started request cannot be recalled; it runs to completion.
     *
     * @return true when the request was stopped
     */
    boolean cancel();

    /** Why the request is in ERROR; empty otherwise. */
    Optional<TransferException> failure();

    /** The backend the agent chose for this request. */
    Backend backend();

    @Override
    void close();
}
