package io.flotilla.gateway.generation;

import io.flotilla.gateway.admission.AdmissionControl;

import java.time.Instant;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One HTTP generation request from arrival to end: its id, what is known about it so far, and what it
 * holds (an admission permit) that must be given back exactly once when it ends.
 */
public final class RequestContext {

    private final String requestId;
    private final RequestProgress progress;
    private volatile String model;
    private volatile boolean modelServed;
    private volatile String tenant = "";
    private volatile GenerationJob job;
    private volatile AdmissionControl.Permit permit;
    private volatile Throwable error;
    private final AtomicBoolean ended = new AtomicBoolean();

    public RequestContext(String requestId, Instant arrived) {
        this.requestId = requestId;
        this.progress = new RequestProgress(arrived);
    }

    public String requestId() {
        return requestId;
    }

    public RequestProgress progress() {
        return progress;
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

    public void job(GenerationJob job) {
        this.job = job;
        model(job.model(), true);
    }

    /** Null until the request was tokenized and its model resolved. */
    public GenerationJob job() {
        return job;
    }

    public void permit(AdmissionControl.Permit permit) {
        this.permit = permit;
    }

    /** The admission permit, or null when the request was not (yet) admitted. */
    public AdmissionControl.Permit permit() {
        return permit;
    }

    public void error(Throwable error) {
        this.error = error;
    }

    /** The error that ended the request before its response started, or null. */
    public Throwable error() {
        return error;
    }

    /** True exactly once: for the caller that ends the request. */
    public boolean markEnded() {
        return ended.compareAndSet(false, true);
    }
}
