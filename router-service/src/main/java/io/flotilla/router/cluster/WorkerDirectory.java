package io.flotilla.router.cluster;

import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.core.WorkerView;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * The router's membership view, fed by the Kafka, gRPC and Kubernetes shells: the driver of a
 * {@link MembershipState}, whose rules it follows (leases, epochs, suspects, pods). Every method takes the
 * time it is called at. Each event is one serialized step: the state changes, then the view listener is told
 * each {@link MembershipState.ViewChange} it produced, in order, before the next step starts; reads are steps
 * too. Thread-safe.
 */
public final class WorkerDirectory {

    private final Object step = new Object();
    private final MembershipState state = new MembershipState();
    /** Told every worker's new view (null: gone, or not routable at all) after each change to it. */
    private BiConsumer<String, WorkerView> viewChanged = (id, view) -> { };

    /**
     * Registers the one listener told, within the step that changed it (so it must not block), each worker's
     * view after every change to it (membership, load report, suspect flag), or null when it left.
     */
    public void onViewChange(BiConsumer<String, WorkerView> listener) {
        Objects.requireNonNull(listener, "listener");
        synchronized (step) {
            viewChanged = listener;
        }
    }

    /**
     * Applies a membership record received at {@code nowMs}.
     *
     * @return true when a known process of this worker is gone (STOPPED, or replaced by a new epoch):
     *         whatever was booked on or cached by it must be forgotten
     */
    public boolean onStatus(WorkerStatus status, long nowMs) {
        return change((s, out) -> s.onStatus(status, nowMs, out));
    }

    /**
     * Applies a load report; reports of another epoch than the current one are ignored.
     *
     * @return true when the report was taken
     */
    public boolean onLoad(WorkerLoad load) {
        return change((s, out) -> s.onLoad(load, out));
    }

    /** The gateway (or the router itself) saw a call to this worker fail. */
    public void markSuspect(String workerId) {
        change((s, out) -> {
            s.markSuspect(workerId, out);
            return null;
        });
    }

    /** A connection to process {@code epoch} of this worker was lost (see {@link WorkerWatch}). */
    public void markSuspect(String workerId, long epoch) {
        change((s, out) -> {
            s.markSuspect(workerId, epoch, out);
            return null;
        });
    }

    /** The processes routing may pick now that have an endpoint. */
    List<MembershipState.Target> routableTargets() {
        return read(MembershipState::routableTargets);
    }

    /** How many workers routing may pick now (in membership, routable, not suspect). */
    public int routable() {
        return read(MembershipState::routable);
    }

    /** A health probe answered: the worker takes requests again. */
    public void clearSuspect(String workerId) {
        change((s, out) -> {
            s.clearSuspect(workerId, out);
            return null;
        });
    }

    public Map<String, String> suspectEndpoints() {
        return read(MembershipState::suspectEndpoints);
    }

    /** The membership feed's health as the Kafka shell last saw it. */
    public void feedHealth(boolean healthy, long nowMs) {
        change((s, out) -> {
            s.feedHealth(healthy, nowMs);
            return null;
        });
    }

    public boolean feedHealthy() {
        return read(MembershipState::feedHealthy);
    }

    /**
     * Removes workers whose lease lapsed (only while the feed is healthy).
     *
     * @return the ids removed
     */
    public Set<String> expire(long nowMs) {
        return change((s, out) -> s.expire(nowMs, out));
    }

    /**
     * Replaces the Kubernetes view with the names of the worker pods that exist now.
     *
     * @return the workers in membership that left routing because their pod is gone: whatever was booked on them
     *         must be forgotten
     */
    public Set<String> podsPresent(Set<String> present) {
        return change((s, out) -> s.podsPresent(present, out));
    }

    /** Workers in membership (their lease running) whose pod is gone: out of routing. 0 without a Kubernetes view. */
    public int withoutPod() {
        return read(MembershipState::withoutPod);
    }

    /** Every known worker as the routing core sees it, sorted by id. */
    public List<WorkerView> views() {
        return read(MembershipState::views);
    }

    /**
     * Runs {@code query} on every known worker's view (as {@link #views()} has them) within one step, without
     * copying them: for a scan whose answer is all the caller needs. {@code query} must not block, and must not
     * keep the collection.
     */
    public <R> R scanViews(Function<java.util.Collection<WorkerView>, R> query) {
        return read(s -> query.apply(s.liveViews()));
    }

    /** The worker's view, or null when it is unknown or has no block size. */
    public WorkerView view(String workerId) {
        return read(s -> s.view(workerId));
    }

    public WorkerStatus status(String workerId) {
        return read(s -> s.status(workerId));
    }

    /** The current epoch's last load report, or null. */
    public WorkerLoad load(String workerId) {
        return read(s -> s.load(workerId));
    }

    public int size() {
        return read(MembershipState::size);
    }

    /** One step that may change views: the event, then the listener told of each change, in order. */
    private <R> R change(BiFunction<MembershipState, List<MembershipState.ViewChange>, R> event) {
        List<MembershipState.ViewChange> changes = new ArrayList<>(2);
        return read(s -> {
            R result = event.apply(s, changes);
            for (MembershipState.ViewChange c : changes) {
                viewChanged.accept(c.workerId(), c.view());
            }
            return result;
        });
    }

    /** The one serialization point of every step. */
    private <R> R read(Function<MembershipState, R> query) {
        synchronized (step) {
            return query.apply(state);
        }
    }
}
