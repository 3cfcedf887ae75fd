package io.flotilla.protocol.kafka;

import org.apache.kafka.common.errors.AuthenticationException;
import org.apache.kafka.common.errors.AuthorizationException;
import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Names what went wrong between a service and Kafka in words an operator acts on: the kind
 * ({@code authentication}, {@code authorization}, {@code unreachable}, {@code missing topic},
 * {@code error}) followed by the client's own message. Health details and logs use it, so a SASL
 * misconfiguration reads as one, not as a generic timeout.
 */
public final class KafkaFailures {

    private KafkaFailures() {
    }

    /** The failure's kind, one of the words above. */
    public static String kind(Throwable error) {
        Throwable e = unwrap(error);
        if (e instanceof AuthenticationException) {
            return "authentication";
        }
        if (e instanceof AuthorizationException) {
            return "authorization";
        }
        if (e instanceof UnknownTopicOrPartitionException) {
            return "missing topic";
        }
        if (e instanceof TimeoutException || e instanceof java.util.concurrent.TimeoutException) {
            return "unreachable";
        }
        return "error";
    }

    /** {@code kind: message}, e.g. {@code authentication: Authentication failed: Invalid username or password}. */
    public static String describe(Throwable error) {
        Throwable e = unwrap(error);
        String message = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return kind(e) + ": " + message;
    }

    static Throwable unwrap(Throwable error) {
        Throwable e = error;
        while ((e instanceof ExecutionException || e instanceof CompletionException) && e.getCause() != null) {
            e = e.getCause();
        }
        return e;
    }
}
