package io.flotilla.gateway.admission;

/** Why a request was not admitted: the wait queue was full, or its wait passed the queue timeout. */
public final class AdmissionRejected extends RuntimeException {

    public enum Reason { QUEUE_FULL, QUEUE_TIMEOUT }

    private final Reason reason;

    AdmissionRejected(Reason reason, String message) {
        super(message, null, false, false);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
