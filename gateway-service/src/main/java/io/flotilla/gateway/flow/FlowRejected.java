package io.flotilla.gateway.flow;

/**
 * Why flow control did not dispatch a request: the model's queue was full, the request's deadline
 * passed while it waited, or a request of a higher band took its place in a full queue.
 */
public final class FlowRejected extends RuntimeException {

    public enum Reason { QUEUE_FULL, QUEUE_TIMEOUT, DISPLACED }

    private final Reason reason;

    FlowRejected(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
