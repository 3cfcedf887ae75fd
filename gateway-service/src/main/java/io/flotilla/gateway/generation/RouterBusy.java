package io.flotilla.gateway.generation;

import java.time.Duration;

/** The router answered busy: every worker of the model is over its thresholds. The request waits again. */
final class RouterBusy extends RuntimeException {

    private final Duration retryAfter;

    RouterBusy(Duration retryAfter) {
        super("every worker is busy", null, false, false);
        this.retryAfter = retryAfter;
    }

    Duration retryAfter() {
        return retryAfter;
    }
}
