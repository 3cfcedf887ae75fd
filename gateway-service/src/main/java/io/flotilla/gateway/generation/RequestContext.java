package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.Priority;

import java.time.Instant;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One HTTP request from arrival to end: its id, its endpoint, and its {@link RequestResult}, the one model of
 * everything known about it (what the intake learned included, {@link RequestIntake}), which only {@link #on}
 * changes, by folding an event into a new value. The accessors read the current value.
 */
public final class RequestContext {

    private final String requestId;
    private final String endpoint;
    private volatile RequestResult result;
    private final AtomicBoolean ended = new AtomicBoolean();

    /** @param endpoint the request's path ({@code /v1/chat/completions}, {@code /v1/messages}, …), a metrics tag */
    public RequestContext(String requestId, Instant arrived, String endpoint) {
        this.requestId = requestId;
        this.endpoint = endpoint;
        this.result = RequestResult.arrived(arrived);
    }

    /** A request not served through an HTTP endpoint (tests of the pipeline). */
    public RequestContext(String requestId, Instant arrived) {
        this(requestId, arrived, "none");
    }

    public String requestId() {
        return requestId;
    }

    public String endpoint() {
        return endpoint;
    }

    /** What is known so far; a whole, immutable value. */
    public RequestResult result() {
        return result;
    }

    /** Folds {@code event} into the result. Events of one request arrive one at a time, in order. */
    public synchronized void on(RequestEvent event) {
        result = result.apply(event);
    }

    private RequestIntake intake() {
        return result.intake();
    }

    /** The model asked for (resolved once {@link #modelServed}); null before the body was read. */
    public String model() {
        return intake().model();
    }

    public boolean modelServed() {
        return intake().modelServed();
    }

    public String tenant() {
        return intake().tenant();
    }

    /** The flow the request's limits, fair share and per-tenant meters count it in: its API key id, else its tenant. */
    public String flow() {
        return intake().flow();
    }

    public Priority priority() {
        return intake().priority();
    }

    /** Null until the request was tokenized and its model resolved. */
    public GenerationJob job() {
        return intake().job();
    }

    /** The prompt's block hashes, computed once with the job (cost estimate and first Route share them). */
    public long[] promptHashes() {
        return intake().promptHashes();
    }

    public FlowRequest flowRequest() {
        return intake().flowRequest();
    }

    /** The error that ended the request before its response started, or null. */
    public Throwable error() {
        return intake().error();
    }

    /** {@link RequestIntake#routeHints}. */
    public Map<String, String> routeHints() {
        return intake().routeHints();
    }

    /** True exactly once: for the caller that ends the request. */
    public boolean markEnded() {
        return ended.compareAndSet(false, true);
    }
}
