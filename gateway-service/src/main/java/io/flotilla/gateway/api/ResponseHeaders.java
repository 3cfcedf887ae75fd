package io.flotilla.gateway.api;

/** Headers the gateway reads from generation requests and adds to their responses. */
public final class ResponseHeaders {

    /** The worker that served the request (for streams: the one that produced the first token). */
    public static final String WORKER = "x-flotilla-worker";
    /** The prefill worker whose KV the decode worker was handed, when the request ran disaggregated. */
    public static final String PREFILL_WORKER = "x-flotilla-prefill-worker";
    /** The gateway's request id (also the router's and workers'). */
    public static final String REQUEST_ID = "x-request-id";

    /**
     * Request header: {@code off} keeps the request aggregated on one worker; {@code auto} (the default)
     * lets the router disaggregate it when the model allows and the prompt is long enough.
     */
    public static final String DISAGG = "x-flotilla-disagg";

    private ResponseHeaders() {
    }
}
