package io.flotilla.worker.api;

import io.grpc.Status;

/** How the worker's call failures map to gRPC status codes. */
final class GrpcErrors {

    private GrpcErrors() {
    }

    static Status toStatus(CallFailure failure) {
        Status status = switch (failure.kind()) {
            case INVALID -> Status.INVALID_ARGUMENT;
            case PRECONDITION -> Status.FAILED_PRECONDITION;
            case OVERLOADED -> Status.RESOURCE_EXHAUSTED;
            case UNAVAILABLE -> Status.UNAVAILABLE;
            case UNIMPLEMENTED -> Status.UNIMPLEMENTED;
            case CANCELLED -> Status.CANCELLED;
            case DEADLINE_EXCEEDED -> Status.DEADLINE_EXCEEDED;
            case INTERNAL -> Status.INTERNAL;
        };
        status = status.withDescription(failure.message());
        return failure.cause() == null ? status : status.withCause(failure.cause());
    }

    static Status toStatus(Throwable error) {
        return toStatus(CallFailure.of(error));
    }
}
