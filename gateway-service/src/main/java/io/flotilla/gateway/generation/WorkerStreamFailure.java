package io.flotilla.gateway.generation;

import io.grpc.Status;

import java.util.concurrent.TimeoutException;

/**
 * A worker's token stream (or the call that opens it) failed for a reason other than our own cancel.
 *
 * <p>Migratable unless the worker refused the request itself (INVALID_ARGUMENT and kin), which
 * another worker would refuse too. Reported to the router as a worker failure when the worker looks
 * dead or broken (UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS, DEADLINE_EXCEEDED, a silent stream),
 * not when it is merely full (RESOURCE_EXHAUSTED) or draining requests (ABORTED/CANCELLED).
 */
final class WorkerStreamFailure extends RuntimeException {

    private final String workerId;
    private final Status.Code code;

    WorkerStreamFailure(String workerId, Status.Code code, String message, Throwable cause) {
        super(message, cause, false, false);
        this.workerId = workerId;
        this.code = code;
    }

    static WorkerStreamFailure of(String workerId, Throwable error) {
        if (error instanceof TimeoutException) {
            return new WorkerStreamFailure(workerId, Status.Code.DEADLINE_EXCEEDED,
                    "worker " + workerId + " sent nothing within the stream idle timeout", error);
        }
        Status status = Status.fromThrowable(error);
        String description = status.getDescription() == null ? status.getCode().name()
                : status.getCode() + ": " + status.getDescription();
        return new WorkerStreamFailure(workerId, status.getCode(), "worker " + workerId + " failed: " + description, error);
    }

    String workerId() {
        return workerId;
    }

    Status.Code code() {
        return code;
    }

    boolean migratable() {
        return switch (code) {
            case INVALID_ARGUMENT, FAILED_PRECONDITION, OUT_OF_RANGE, NOT_FOUND, PERMISSION_DENIED, UNAUTHENTICATED,
                 UNIMPLEMENTED, ALREADY_EXISTS -> false;
            default -> true;
        };
    }

    boolean reportable() {
        return switch (code) {
            case UNAVAILABLE, INTERNAL, UNKNOWN, DATA_LOSS, DEADLINE_EXCEEDED -> true;
            default -> false;
        };
    }
}
