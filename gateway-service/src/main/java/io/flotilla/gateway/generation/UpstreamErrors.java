package io.flotilla.gateway.generation;

import io.flotilla.gateway.openai.ApiError;
import io.grpc.Status;

import java.time.Duration;

/** How router and worker failures reach the client: 4xx only for the client's own mistakes, else 502/503. */
final class UpstreamErrors {

    private static final Duration RETRY_SOON = Duration.ofSeconds(1);

    private UpstreamErrors() {
    }

    static ApiError fromRouter(Throwable error) {
        if (error instanceof ApiError api) {
            return api;
        }
        Status status = Status.fromThrowable(error);
        String detail = status.getDescription() == null ? status.getCode().name() : status.getDescription();
        return switch (status.getCode()) {
            case UNAVAILABLE, DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED, CANCELLED -> ApiError.unavailable("router_unavailable",
                    "The router did not answer in time (" + status.getCode() + "): " + detail, RETRY_SOON);
            default -> ApiError.badGateway("router_error", "The router failed to route the request ("
                    + status.getCode() + "): " + detail);
        };
    }

    /** The error of a worker failure that was not (or no longer) migrated. */
    static ApiError fromWorker(WorkerStreamFailure failure) {
        return switch (failure.code()) {
            case INVALID_ARGUMENT, OUT_OF_RANGE, FAILED_PRECONDITION -> ApiError.invalid(null,
                    "The worker rejected the request: " + failure.getMessage());
            case RESOURCE_EXHAUSTED -> ApiError.unavailable("worker_overloaded",
                    "Every worker tried is full: " + failure.getMessage(), RETRY_SOON);
            case DEADLINE_EXCEEDED -> ApiError.unavailable("worker_timeout",
                    "No worker finished the request in time: " + failure.getMessage(), RETRY_SOON);
            case UNAVAILABLE, ABORTED, CANCELLED -> ApiError.unavailable("worker_unavailable",
                    "No worker could finish the request: " + failure.getMessage(), RETRY_SOON);
            default -> ApiError.badGateway("worker_error", "The worker failed: " + failure.getMessage());
        };
    }
}
