package io.flotilla.gateway.flow;

import java.time.Duration;

/**
 * Why flow control did not take a request, in its own terms: shed by the queue ({@link QueueFull},
 * {@link QueueTimeout}, {@link Displaced}) or refused by the {@link FlowPolicy} for what its headers
 * asked ({@link BadPriority}, {@link PriorityNotAllowed}, {@link QueueTimeoutTooLong}, {@link BadDuration}).
 * The API layer maps each to a status and an error body; nothing here knows HTTP.
 */
public sealed interface FlowRejection {

    /** What happened, in words, for a request of {@code model}. */
    String detail(String model);

    /** The queue held {@code queued} requests, its limit {@code limit}, and none could be displaced. */
    record QueueFull(int queued, int limit) implements FlowRejection {
        @Override
        public String detail(String model) {
            return queued + " requests already wait for '" + model + "' (limit " + limit + ")";
        }
    }

    /** The request's deadline passed after {@code waitedNanos} in the queue (0: it never waited). */
    record QueueTimeout(long waitedNanos) implements FlowRejection {
        @Override
        public String detail(String model) {
            return "no capacity for '" + model + "' became free within the request's queue deadline (waited "
                    + waitedNanos / 1_000_000 + " ms)";
        }
    }

    /** A request of band {@code by} took this {@code victim}-band request's place in a full queue. */
    record Displaced(Priority by, Priority victim) implements FlowRejection {
        @Override
        public String detail(String model) {
            return "the queue for '" + model + "' is full and a " + by.label() + " request took the place of this "
                    + victim.label() + " one";
        }
    }

    /** {@code x-flotilla-priority} named no band. */
    record BadPriority(String value) implements FlowRejection {
        @Override
        public String detail(String model) {
            return "Invalid header 'x-flotilla-priority': '" + value + "'. Expected 'interactive', 'standard' or 'batch'.";
        }
    }

    /** The flow asked for a band above its {@code max}. */
    record PriorityNotAllowed(String flow, Priority max, Priority asked) implements FlowRejection {
        @Override
        public String detail(String model) {
            return "Requests of " + flow + " may ask for priority '" + max.label() + "' at most, not '"
                    + asked.label() + "'.";
        }
    }

    /** {@code x-flotilla-queue-timeout} asked for a wait longer than {@code max}. */
    record QueueTimeoutTooLong(String value, Duration max) implements FlowRejection {
        @Override
        public String detail(String model) {
            return "Invalid header 'x-flotilla-queue-timeout': " + value + " is longer than the longest wait this "
                    + "gateway allows (" + max.toSeconds() + " s).";
        }
    }

    /** A duration header that does not parse. */
    record BadDuration(String header, String value) implements FlowRejection {
        @Override
        public String detail(String model) {
            return "Invalid header '" + header + "': '" + value
                    + "'. Expected a duration such as 30s, 500ms, 2m or a number of seconds.";
        }
    }
}
