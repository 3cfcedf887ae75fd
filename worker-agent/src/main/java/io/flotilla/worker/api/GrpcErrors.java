package io.flotilla.worker.api;

import io.flotilla.worker.engine.DeadlineExceededException;
import io.flotilla.worker.engine.EngineOverloadedException;
import io.flotilla.worker.engine.EngineUnavailableException;
import io.flotilla.worker.engine.InvalidRequestException;
import io.flotilla.worker.engine.RequestCancelledException;
import io.grpc.Status;

/** How engine failures map to gRPC status codes. */
final class GrpcErrors {

    private GrpcErrors() {
    }

    static Status toStatus(Throwable error) {
        if (error instanceof InvalidRequestException) {
            return Status.INVALID_ARGUMENT.withDescription(error.getMessage());
        }
        if (error instanceof EngineOverloadedException) {
            return Status.RESOURCE_EXHAUSTED.withDescription(error.getMessage());
        }
        if (error instanceof EngineUnavailableException) {
            return Status.UNAVAILABLE.withDescription(error.getMessage());
        }
        if (error instanceof RequestCancelledException) {
            return Status.CANCELLED.withDescription(error.getMessage());
        }
        if (error instanceof DeadlineExceededException) {
            return Status.DEADLINE_EXCEEDED.withDescription(error.getMessage());
        }
        return Status.INTERNAL.withDescription("engine failure: " + error.getMessage()).withCause(error);
    }
}
