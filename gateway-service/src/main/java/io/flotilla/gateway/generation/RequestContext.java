package io.flotilla.gateway.generation;

import io.flotilla.gateway.flow.FlowRequest;
import io.flotilla.gateway.flow.Priority;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One HTTP generation request from arrival to end: its id, who sent it, its place in flow control,
 * and its {@link RequestResult}, which only {@link #on} changes (by folding an event into a new value).
 */
public final class RequestContext {

    private final String requestId;
    private final String endpoint;
    private volatile RequestResult result;
    private volatile String model;
    private volatile boolean modelServed;
    private volatile String tenant = "";
    private volatile String flow = "";
    private volatile Priority priority = Priority.STANDARD;
    private volatile GenerationJob job;
    private volatile FlowRequest flowRequest;
    private volatile long[] promptHashes;
    private volatile Throwable error;
    private volatile java.util.Map<String, String> routeHints = java.util.Map.of();
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

    /** The model asked for; {@code served} once the catalog confirmed a worker serves it. */
    public void model(String name, boolean served) {
        this.model = name;
        this.modelServed = served;
    }

    public String model() {
        return model;
    }

    public boolean modelServed() {
        return modelServed;
    }

    public void tenant(String tenant) {
        this.tenant = tenant;
    }

    public String tenant() {
        return tenant;
    }

    /** The flow the request's limits, fair share and per-tenant meters count it in: its API key id, else its tenant. */
    public void flow(String flow) {
        this.flow = flow;
    }

    public String flow() {
        return flow;
    }

    public void priority(Priority priority) {
        this.priority = priority;
    }

    public Priority priority() {
        return priority;
    }

    public void job(GenerationJob job) {
        this.job = job;
        model(job.model(), true);
    }

    /** Null until the request was tokenized and its model resolved. */
    public GenerationJob job() {
        return job;
    }

    /** The prompt's block hashes, computed once (cost estimate and first Route share them). */
    public long[] promptHashes() {
        long[] h = promptHashes;
        if (h == null) {
            h = job.promptHashes() != null ? job.promptHashes() : job.hasher().seqHashes(job.promptTokens());
            promptHashes = h;
        }
        return h;
    }

    public void flowRequest(FlowRequest request) {
        this.flowRequest = request;
    }

    public FlowRequest flowRequest() {
        return flowRequest;
    }

    public void error(Throwable error) {
        this.error = error;
    }

    /** The error that ended the request before its response started, or null. */
    public Throwable error() {
        return error;
    }

    /**
     * What the endpoint knows that may help the router place the request ({@code RouteRequest.hints}), e.g. the
     * worker that served the previous turn of a conversation. The router prices a hint; it never obeys one.
     */
    public void routeHints(java.util.Map<String, String> hints) {
        this.routeHints = java.util.Map.copyOf(hints);
    }

    public java.util.Map<String, String> routeHints() {
        return routeHints;
    }

    /** True exactly once: for the caller that ends the request. */
    public boolean markEnded() {
        return ended.compareAndSet(false, true);
    }
}
