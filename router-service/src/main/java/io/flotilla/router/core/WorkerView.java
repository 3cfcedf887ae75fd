package io.flotilla.router.core;

import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;

import java.util.Objects;
import java.util.Optional;

/**
 * What the router knows about one worker when it decides: membership ({@code flotilla.workers}),
 * the last load report ({@code flotilla.worker-load}) and the shell's liveness verdict. Immutable.
 *
 * @param routable       the shell's verdict: lease alive and not marked suspect by a failed call.
 *                       A worker takes new requests only when {@code routable} and {@code READY}
 *                       (see {@link #acceptsRequests()})
 * @param timing         advertised engine timing; empty prices this worker in blocks, not ms
 * @param totalKvBlocks  KV capacity in blocks; 0 when unknown
 * @param load           last load report, {@link LoadReport#NONE} before the first one
 * @param tiers          what onboarding from the worker's lower KV tiers costs; {@link KvTierLinks#NONE}
 *                       when it has none (or does not say)
 * @param adapters       LoRA adapters it has loaded and can load
 * @param isolation      how its engine keeps tenants' KV apart ({@code NONE}: it takes no tenant-salted request)
 * @param embeds         its engine embeds (its capabilities carry an embedding): it may take embedding requests
 */
public record WorkerView(String id, WorkerRole role, String model, int blockSize, String kvLayout,
                         String endpoint, WorkerState state, boolean routable,
                         Optional<WorkerTiming> timing, int totalKvBlocks, LoadReport load, KvTierLinks tiers,
                         WorkerAdapters adapters, TenantIsolation isolation, boolean embeds) {

    /** A worker whose engine does not embed. */
    public WorkerView(String id, WorkerRole role, String model, int blockSize, String kvLayout, String endpoint,
                      WorkerState state, boolean routable, Optional<WorkerTiming> timing, int totalKvBlocks,
                      LoadReport load, KvTierLinks tiers, WorkerAdapters adapters, TenantIsolation isolation) {
        this(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing, totalKvBlocks, load, tiers,
                adapters, isolation, false);
    }

    /** A worker without adapters that advertises no tenant isolation. */
    public WorkerView(String id, WorkerRole role, String model, int blockSize, String kvLayout, String endpoint,
                      WorkerState state, boolean routable, Optional<WorkerTiming> timing, int totalKvBlocks,
                      LoadReport load, KvTierLinks tiers) {
        this(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing, totalKvBlocks, load, tiers,
                WorkerAdapters.NONE, TenantIsolation.TENANT_ISOLATION_NONE);
    }

    public WorkerView {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(role, "role");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(state, "state");
        kvLayout = kvLayout == null ? "" : kvLayout;
        endpoint = endpoint == null ? "" : endpoint;
        timing = timing == null ? Optional.empty() : timing;
        load = load == null ? LoadReport.NONE : load;
        tiers = tiers == null ? KvTierLinks.NONE : tiers;
        adapters = adapters == null ? WorkerAdapters.NONE : adapters;
        isolation = isolation == null || isolation == TenantIsolation.UNRECOGNIZED ? TenantIsolation.TENANT_ISOLATION_NONE
                : isolation;
        if (blockSize <= 0 || totalKvBlocks < 0) {
            throw new IllegalArgumentException("worker " + id + ": block size must be positive, capacity not negative");
        }
    }

    /** A worker without lower KV tiers. */
    public WorkerView(String id, WorkerRole role, String model, int blockSize, String kvLayout, String endpoint,
                      WorkerState state, boolean routable, Optional<WorkerTiming> timing, int totalKvBlocks,
                      LoadReport load) {
        this(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing, totalKvBlocks, load,
                KvTierLinks.NONE);
    }

    /**
     * Builds a view from the membership record and the latest load report (null before the first).
     * Capacity comes from the status, or from the load report when the status has none. Timing is the
     * status's (the simulator advertises its model there), else the one the worker learned from its real
     * engine and published with its load report; a real engine without enough samples has none, and is
     * priced by load alone.
     */
    public static WorkerView of(WorkerStatus status, WorkerLoad load, boolean routable) {
        int total = status.getCapacity().getTotalKvBlocks();
        if (total == 0 && load != null) {
            total = load.getTotalKvBlocks();
        }
        return new WorkerView(status.getWorkerId(), status.getRole(), status.getModel(), status.getBlockSize(),
                status.getKvLayout(), status.getEndpoint(), status.getState(), routable,
                timingOf(status, load), total,
                load == null ? LoadReport.NONE : LoadReport.fromProto(load),
                KvTierLinks.fromProto(status.getKvTiers(), status.hasKvTiers()),
                WorkerAdapters.fromProto(status.getAdapters(), status.hasAdapters()), status.getTenantIsolation(),
                status.getCapabilities().hasEmbedding());
    }

    private static Optional<WorkerTiming> timingOf(WorkerStatus status, WorkerLoad load) {
        Optional<WorkerTiming> advertised = WorkerTiming.fromProto(status.getTiming(), status.hasTiming());
        if (advertised.isPresent() || load == null) {
            return advertised;
        }
        return WorkerTiming.fromProto(load.getLearnedTiming(), load.hasLearnedTiming());
    }

    /** READY and routable: the only workers a decision may name. */
    public boolean acceptsRequests() {
        return routable && state == WorkerState.WORKER_STATE_READY;
    }

    /** Whether its engine keeps a tenant-salted request's KV apart from every other tenant's. */
    public boolean isolatesTenants() {
        return isolation != TenantIsolation.TENANT_ISOLATION_NONE;
    }

    /** Runs prefill only. */
    public boolean isPrefill() {
        return role == WorkerRole.WORKER_ROLE_PREFILL;
    }

    /** Decodes with KV handed over from a prefill worker (and prefills itself when not given one). */
    public boolean isDecode() {
        return role == WorkerRole.WORKER_ROLE_DECODE;
    }

    /** Aggregated (an unspecified role counts as aggregated). */
    public boolean isAggregated() {
        return !isPrefill() && !isDecode();
    }

    public WorkerView withLoad(LoadReport newLoad) {
        return new WorkerView(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing,
                totalKvBlocks, newLoad, tiers, adapters, isolation);
    }

    public WorkerView withRoutable(boolean newRoutable) {
        return new WorkerView(id, role, model, blockSize, kvLayout, endpoint, state, newRoutable, timing,
                totalKvBlocks, load, tiers, adapters, isolation);
    }

    public WorkerView withState(WorkerState newState) {
        return new WorkerView(id, role, model, blockSize, kvLayout, endpoint, newState, routable, timing,
                totalKvBlocks, load, tiers, adapters, isolation);
    }
}
