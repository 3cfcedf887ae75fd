package io.flotilla.gateway.generation;

import io.flotilla.gateway.openai.ApiError;
import io.flotilla.protocol.v1.RequestOutcome;

import java.util.Locale;
import java.util.Set;

/** How a request's end maps to {@link RequestOutcome} (records) and the metrics' {@code outcome} tag. */
public final class RequestOutcomes {

    /** 429/503 codes of load shedding: the request was refused before it ran. */
    private static final Set<String> REJECTIONS = Set.of("queue_full", "queue_timeout", "queue_displaced", "rate_limited",
            "no_worker", "worker_overloaded");

    private RequestOutcomes() {
    }

    public static RequestOutcome of(ApiError error) {
        if (error.code() != null && REJECTIONS.contains(error.code())) {
            return RequestOutcome.REQUEST_OUTCOME_REJECTED;
        }
        if ("worker_timeout".equals(error.code()) || error.status() == 504) {
            return RequestOutcome.REQUEST_OUTCOME_TIMEOUT;
        }
        if (error.status() == 429) {
            return RequestOutcome.REQUEST_OUTCOME_REJECTED;
        }
        return error.status() < 500 ? RequestOutcome.REQUEST_OUTCOME_CLIENT_ERROR : RequestOutcome.REQUEST_OUTCOME_FAILED;
    }

    /** {@code ok}, {@code client_error}, {@code rejected}, {@code cancelled}, {@code failed}, {@code timeout}. */
    public static String tag(RequestOutcome outcome) {
        return outcome.name().substring("REQUEST_OUTCOME_".length()).toLowerCase(Locale.ROOT);
    }
}
