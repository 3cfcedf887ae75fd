package io.flotilla.gateway.openai;

import java.time.Duration;

/**
 * An error the client sees as an OpenAI error body {@code {"error": {message, type, param, code}}}
 * with an HTTP status (and, for overload, a {@code Retry-After}). Thrown anywhere on the request
 * path; rendered in one place (the web exception handler, or an SSE error event once a stream started).
 */
public final class ApiError extends RuntimeException {

    public static final String INVALID_REQUEST = "invalid_request_error";
    public static final String AUTHENTICATION = "authentication_error";
    public static final String RATE_LIMIT = "rate_limit_error";
    public static final String SERVER = "server_error";

    private final int status;
    private final String type;
    private final String param;
    private final String code;
    private final Duration retryAfter;

    public ApiError(int status, String type, String param, String code, String message, Duration retryAfter) {
        super(message, null, false, false);
        this.status = status;
        this.type = type;
        this.param = param;
        this.code = code;
        this.retryAfter = retryAfter;
    }

    /** 400 for a client mistake in {@code param} (null when no single parameter is at fault). */
    public static ApiError invalid(String param, String message) {
        return new ApiError(400, INVALID_REQUEST, param, null, message, null);
    }

    /** 400 for a parameter (or value) this server does not support. */
    public static ApiError unsupported(String param, String message) {
        return new ApiError(400, INVALID_REQUEST, param, "unsupported_parameter", message, null);
    }

    public static ApiError modelNotFound(String model) {
        return new ApiError(404, INVALID_REQUEST, "model", "model_not_found",
                "The model '" + model + "' does not exist or no worker serves it right now.", null);
    }

    public static ApiError unauthorized(String message) {
        return new ApiError(401, AUTHENTICATION, null, "invalid_api_key", message, null);
    }

    public static ApiError rateLimited(String code, String message, Duration retryAfter) {
        return new ApiError(429, RATE_LIMIT, null, code, message, retryAfter);
    }

    /** 503: the service cannot take the request now; the client should retry after {@code retryAfter}. */
    public static ApiError unavailable(String code, String message, Duration retryAfter) {
        return new ApiError(503, SERVER, null, code, message, retryAfter);
    }

    /** 502: an upstream component (router, worker) failed in a way retrying will not fix by itself. */
    public static ApiError badGateway(String code, String message) {
        return new ApiError(502, SERVER, null, code, message, null);
    }

    public int status() {
        return status;
    }

    public String type() {
        return type;
    }

    public String param() {
        return param;
    }

    public String code() {
        return code;
    }

    /** Null when the response carries no Retry-After. */
    public Duration retryAfter() {
        return retryAfter;
    }

    /** Retry-After in whole seconds, rounded up, at least 1. */
    public long retryAfterSeconds() {
        long ms = retryAfter == null ? 1000 : retryAfter.toMillis();
        return Math.max(1, (ms + 999) / 1000);
    }
}
