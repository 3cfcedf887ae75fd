package io.flotilla.gateway.client;

import java.util.Set;

/**
 * No router answered a Route in time: every attempt timed out or found its router unreachable. The
 * request continues on the gateway's own pick; {@code touched} routers may still hold a booking.
 */
public final class RouteFailed extends RuntimeException {

    private final Set<Integer> touched;

    RouteFailed(String message, Throwable cause, Set<Integer> touched) {
        super(message, cause, false, false);
        this.touched = Set.copyOf(touched);
    }

    public Set<Integer> touched() {
        return touched;
    }
}
