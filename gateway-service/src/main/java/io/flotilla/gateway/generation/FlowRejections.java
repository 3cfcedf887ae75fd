package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowRejected;
import io.flotilla.gateway.openai.ApiError;

import java.time.Duration;

/**
 * Flow control's rejections as the API answers them: a full queue is a 429, a deadline passed or a
 * place lost to a higher band a 503 (both with {@code Retry-After}), a header flow control does not
 * understand a 400, a band above the flow's maximum a 403.
 */
public final class FlowRejections {

    private FlowRejections() {
    }

    /**
     * @param model      the request's model (named in the messages of shed requests)
     * @param retryAfter the {@code Retry-After} of shed requests
     */
    public static ApiError toApiError(String model, FlowRejected e, Duration retryAfter) {
        return switch (e.reason()) {
            case QUEUE_FULL -> ApiError.rateLimited("queue_full", "Too many requests for '" + model + "': "
                    + e.getMessage() + ". Retry later.", retryAfter);
            case QUEUE_TIMEOUT -> ApiError.unavailable("queue_timeout", "The request for '" + model + "' waited in the "
                    + "queue for capacity until its deadline: " + e.getMessage() + ". Retry later.", retryAfter);
            case DISPLACED -> ApiError.unavailable("queue_displaced", "The request for '" + model + "' was displaced "
                    + "from the queue: " + e.getMessage() + ". Retry later.", retryAfter);
            case INVALID_HEADER -> ApiError.invalid(null, e.getMessage());
            case PRIORITY_NOT_ALLOWED -> new ApiError(403, "permission_error", null, "priority_not_allowed",
                    e.getMessage(), null);
        };
    }
}
