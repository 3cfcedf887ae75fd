package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowRejected;
import io.flotilla.gateway.flow.FlowRejection;
import io.flotilla.gateway.flow.Priority;
import io.flotilla.gateway.openai.ApiError;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Each of flow control's rejections as the API answers it: status, type, code, message and Retry-After, literally. */
class FlowRejectionsTest {

    private record Row(FlowRejection why, int status, String type, String code, String message, Duration retryAfter) {
        @Override
        public String toString() {
            return why.toString();
        }
    }

    private static final Duration RETRY = Duration.ofSeconds(2);

    static Stream<Row> rows() {
        return Stream.of(
                new Row(new FlowRejection.QueueFull(3, 3), 429, "rate_limit_error", "queue_full",
                        "Too many requests for 'm': 3 requests already wait for 'm' (limit 3). Retry later.", RETRY),
                new Row(new FlowRejection.QueueTimeout(Duration.ofMillis(1500).toNanos()), 503, "server_error", "queue_timeout",
                        "The request for 'm' waited in the queue for capacity until its deadline: no capacity for 'm' became "
                                + "free within the request's queue deadline (waited 1500 ms). Retry later.", RETRY),
                new Row(new FlowRejection.Displaced(Priority.INTERACTIVE, Priority.BATCH), 503, "server_error", "queue_displaced",
                        "The request for 'm' was displaced from the queue: the queue for 'm' is full and a interactive request "
                                + "took the place of this batch one. Retry later.", RETRY),
                new Row(new FlowRejection.BadPriority("urgent"), 400, "invalid_request_error", null,
                        "Invalid header 'x-flotilla-priority': 'urgent'. Expected 'interactive', 'standard' or 'batch'.", null),
                new Row(new FlowRejection.PriorityNotAllowed("key-1", Priority.STANDARD, Priority.INTERACTIVE), 403,
                        "permission_error", "priority_not_allowed",
                        "Requests of key-1 may ask for priority 'standard' at most, not 'interactive'.", null),
                new Row(new FlowRejection.QueueTimeoutTooLong("10m", Duration.ofMinutes(5)), 400, "invalid_request_error", null,
                        "Invalid header 'x-flotilla-queue-timeout': 10m is longer than the longest wait this gateway allows "
                                + "(300 s).", null),
                new Row(new FlowRejection.BadDuration("x-flotilla-queue-timeout", "soon"), 400, "invalid_request_error", null,
                        "Invalid header 'x-flotilla-queue-timeout': 'soon'. Expected a duration such as 30s, 500ms, 2m or a "
                                + "number of seconds.", null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void eachRejectionHasItsStatusAndBody(Row row) {
        boolean shed = row.retryAfter() != null;
        ApiError e = FlowRejections.toApiError(shed ? "m" : null, new FlowRejected(shed ? "m" : null, row.why()), RETRY);
        assertThat(e.status()).isEqualTo(row.status());
        assertThat(e.type()).isEqualTo(row.type());
        assertThat(e.param()).isNull();
        assertThat(e.code()).isEqualTo(row.code());
        assertThat(e.getMessage()).isEqualTo(row.message());
        assertThat(e.retryAfter()).isEqualTo(row.retryAfter());
    }
}
