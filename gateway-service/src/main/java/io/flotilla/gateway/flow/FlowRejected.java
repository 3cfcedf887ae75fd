package io.flotilla.gateway.flow;

/**
 * Flow control did not take a request: {@link #rejection()} says why in flow control's own terms
 * ({@link FlowRejection}); the API layer maps it to a status and an error body.
 */
public final class FlowRejected extends RuntimeException {

    /**
     * The coarse kinds: shed by the queue (full, deadline passed, displaced by a higher band), or refused
     * by the policy for a header (not understood, or a band above the flow's maximum).
     */
    public enum Reason { QUEUE_FULL, QUEUE_TIMEOUT, DISPLACED, INVALID_HEADER, PRIORITY_NOT_ALLOWED }

    private final transient FlowRejection rejection;

    /** @param model the model the request was for; null where none is known yet (policy refusals) */
    public FlowRejected(String model, FlowRejection rejection) {
        super(rejection.detail(model), null, false, false);
        this.rejection = rejection;
    }

    public Reason reason() {
        FlowRejection r = rejection;
        if (r instanceof FlowRejection.QueueFull) {
            return Reason.QUEUE_FULL;
        }
        if (r instanceof FlowRejection.QueueTimeout) {
            return Reason.QUEUE_TIMEOUT;
        }
        if (r instanceof FlowRejection.Displaced) {
            return Reason.DISPLACED;
        }
        if (r instanceof FlowRejection.PriorityNotAllowed) {
            return Reason.PRIORITY_NOT_ALLOWED;
        }
        return Reason.INVALID_HEADER; // BadPriority, QueueTimeoutTooLong, BadDuration
    }

    public FlowRejection rejection() {
        return rejection;
    }
}
