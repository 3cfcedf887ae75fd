package io.flotilla.gateway.api;

/** Headers the gateway reads from generation requests and adds to their responses. */
public final class ResponseHeaders {

    /** The worker that served the request (for streams: the one that produced the first token). */
    public static final String WORKER = "x-flotilla-worker";
    /** The prefill worker whose KV the decode worker was handed, when the request ran disaggregated. */
    public static final String PREFILL_WORKER = "x-flotilla-prefill-worker";
    /**
     * How the worker was chosen: the router's mode ({@code kv}, {@code kv_approx}, {@code load}, …) or
     * {@code gateway_fallback} when no router answered in time and the gateway picked it itself.
     */
    public static final String MODE = "x-flotilla-mode";
    /** Milliseconds the request waited in the gateway's flow-control queue (0 when dispatched at once). */
    public static final String QUEUE_MS = "x-flotilla-queue-ms";
    /** The gateway's request id (also the router's and workers'). */
    public static final String REQUEST_ID = "x-request-id";

    /**
     * Request header: {@code off} keeps the request aggregated on one worker; {@code auto} (the default)
     * lets the router disaggregate it when the model allows and the prompt is long enough.
     */
    public static final String DISAGG = "x-flotilla-disagg";

    /**
     * Request header: longest wait in the queue for capacity, as {@code 30s}, {@code 500ms}, {@code 2m}
     * or bare seconds; {@code 0} never waits.
     */
    public static final String QUEUE_TIMEOUT = "x-flotilla-queue-timeout";
    /** Request header: priority band, {@code interactive}, {@code standard} or {@code batch}. */
    public static final String PRIORITY = "x-flotilla-priority";
    /**
     * Request header the OpenAI SDKs send: the client's own timeout in seconds. Waiting in the queue
     * past it is pointless, so it caps the queue deadline.
     */
    public static final String CLIENT_TIMEOUT = "x-stainless-timeout";

    private ResponseHeaders() {
    }
}
