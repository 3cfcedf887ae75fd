package io.flotilla.gateway.api;

/** Order of the gateway's web filters (lower runs first): authenticate, then rate-limit per key. */
public final class FilterOrder {

    public static final int AUTHENTICATION = 100;
    public static final int RATE_LIMIT = 200;

    private FilterOrder() {
    }
}
