package io.flotilla.worker.engine;

/** A submitted request. */
public interface RequestHandle {

    String requestId();

    /**
     * Cancels the request if it has not finished: its KV blocks are released at once and its sink
     * gets {@code onFinish(CANCELLED, ...)}. Idempotent; a no-op after the request finished.
     */
    void cancel();
}
