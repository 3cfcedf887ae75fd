package io.flotilla.gateway.routing;

import io.flotilla.protocol.hash.KvScope;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.protocol.v1.WorkerHeadroom;
import io.flotilla.protocol.v1.WorkerInfo;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;

import java.util.Collection;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The gateway's own worker choice when no router answered a Route in time (fail-open). Candidates:
 * READY, routable aggregated or decode workers of the model at the request's block size, not
 * excluded, that serve the request's LoRA adapter and, for a tenant-salted request, isolate tenants (the
 * router's filters). Rule, in order: a worker the router last called busy only when all are; then the least
 * requests — its last reported running + waiting requests corrected by the change in this gateway's own
 * requests on it since that report; then the lower KV use; then rotation, so equal workers share a burst. No prefix
 * affinity: without the router there is no index, and spreading load is the safe choice.
 */
public final class FallbackPicker {

    private final FleetView fleet;
    private final AtomicInteger rotation = new AtomicInteger();

    public FallbackPicker(FleetView fleet) {
        this.fleet = fleet;
    }

    public Optional<WorkerInfo> pick(String model, int blockSize, KvScope scope, Collection<String> exclude) {
        return pick(model, blockSize, scope, exclude, w -> true);
    }

    /** A worker of {@code model} whose engine embeds (its capabilities carry an embedding). */
    public Optional<WorkerInfo> pickEmbedder(String model, Collection<String> exclude) {
        return pick(model, 0, KvScope.SHARED, exclude, w -> w.getCapabilities().hasEmbedding());
    }

    private Optional<WorkerInfo> pick(String model, int blockSize, KvScope scope, Collection<String> exclude,
                                      java.util.function.Predicate<WorkerInfo> also) {
        FleetView.Seen best = null;
        double bestScore = Double.MAX_VALUE;
        var workers = fleet.workers(model);
        int n = workers.size();
        int start = n == 0 ? 0 : Math.floorMod(rotation.getAndIncrement(), n);
        for (int k = 0; k < n; k++) {
            FleetView.Seen s = workers.get((start + k) % n);
            WorkerInfo w = s.info();
            boolean serves = w.getRole() == WorkerRole.WORKER_ROLE_AGGREGATED || w.getRole() == WorkerRole.WORKER_ROLE_DECODE;
            if (!serves || !w.getRoutable() || w.getState() != WorkerState.WORKER_STATE_READY
                    || (blockSize > 0 && w.getBlockSize() != blockSize) || exclude.contains(w.getWorkerId())
                    || (scope.hasLora() && !w.getAdaptersList().contains(scope.loraName()))
                    || (scope.salted() && w.getTenantIsolation() == TenantIsolation.TENANT_ISOLATION_NONE)
                    || !also.test(w)) {
                continue;
            }
            double score = score(s);
            if (score < bestScore) {
                best = s;
                bestScore = score;
            }
        }
        return Optional.ofNullable(best).map(FleetView.Seen::info);
    }

    private double score(FleetView.Seen s) {
        WorkerHeadroom h = s.headroom();
        double requests = Math.max(0, h.getRunningRequests() + h.getWaitingRequests()
                + fleet.own(h.getInfo().getWorkerId()) - s.ownAtSeen());
        double kv = h.getCapacityBlocks() == 0 ? 0 : Math.min(1.0, (double) h.getActiveBlocks() / h.getCapacityBlocks());
        return (h.getBusy() ? 1e9 : 0) + requests + kv * 0.5;
    }
}
