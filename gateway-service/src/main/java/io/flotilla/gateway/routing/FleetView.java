package io.flotilla.gateway.routing;

import io.flotilla.protocol.v1.CapacityUpdate;
import io.flotilla.protocol.v1.ListWorkersResponse;
import io.flotilla.protocol.v1.ModelCapacity;
import io.flotilla.protocol.v1.WorkerHeadroom;
import io.flotilla.protocol.v1.WorkerInfo;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gateway's own picture of the workers, for routing when no router answers: the live worker set
 * and each worker's last load as a router pushed it ({@code WatchCapacity}), or at least the worker
 * list of the last {@code ListWorkers} when no capacity update ever came, plus the gateway's own
 * in-flight requests per worker, counted exactly, so load added since the last update is known.
 * Updates replace the picture of the models they carry; readers get immutable snapshots.
 */
public final class FleetView {

    /**
     * One worker as last seen.
     *
     * @param headroom  its load as the router counted it (the default instance when only listed)
     * @param ownAtSeen this gateway's in-flight requests on it when the load was seen
     */
    public record Seen(WorkerHeadroom headroom, int ownAtSeen) {
        public WorkerInfo info() {
            return headroom.getInfo();
        }
    }

    private final Map<String, List<Seen>> byModel = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> ownInFlight = new ConcurrentHashMap<>();
    private volatile boolean pushed;

    /** A capacity update of any router: its models' workers replace what was known of them. */
    public void update(CapacityUpdate update) {
        pushed = true;
        for (ModelCapacity m : update.getModelsList()) {
            List<Seen> seen = new ArrayList<>(m.getWorkersCount());
            for (WorkerHeadroom h : m.getWorkersList()) {
                seen.add(new Seen(h, own(h.getInfo().getWorkerId())));
            }
            byModel.put(m.getModel(), List.copyOf(seen));
        }
    }

    /** A ListWorkers answer: used only while no capacity update has arrived (it carries no load). */
    public void listed(ListWorkersResponse response) {
        if (pushed) {
            return;
        }
        Map<String, List<Seen>> models = new java.util.HashMap<>();
        for (WorkerInfo w : response.getWorkersList()) {
            models.computeIfAbsent(w.getModel(), k -> new ArrayList<>())
                    .add(new Seen(WorkerHeadroom.newBuilder().setInfo(w).build(), own(w.getWorkerId())));
        }
        models.forEach((model, seen) -> byModel.put(model, List.copyOf(seen)));
    }

    /** Workers of {@code model} as last seen; empty when unknown. */
    public List<Seen> workers(String model) {
        return byModel.getOrDefault(model, List.of());
    }

    public void started(String workerId) {
        ownInFlight.computeIfAbsent(workerId, k -> new AtomicInteger()).incrementAndGet();
    }

    public void ended(String workerId) {
        AtomicInteger n = ownInFlight.get(workerId);
        if (n != null) {
            n.decrementAndGet();
        }
    }

    /** This gateway's requests running on {@code workerId} now. */
    public int own(String workerId) {
        AtomicInteger n = ownInFlight.get(workerId);
        return n == null ? 0 : n.get();
    }
}
