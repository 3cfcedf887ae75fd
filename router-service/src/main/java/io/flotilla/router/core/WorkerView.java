package io.flotilla.router.core;

import java.util.Objects;
import java.util.Optional;

/**
 * What the router knows about one worker when it decides: membership ({@code flotilla.workers}),
 * the last load report ({@code flotilla.worker-load}) and the shell's liveness verdict
 * ({@code ProtoMapping.workerView} builds it from the wire). Immutable.
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
public record WorkerView(String id, Role role, String model, int blockSize, String kvLayout,
                         String endpoint, State state, boolean routable,
                         Optional<WorkerTiming> timing, int totalKvBlocks, LoadReport load, KvTierLinks tiers,
                         WorkerAdapters adapters, Isolation isolation, boolean embeds) {

    /** A worker whose engine does not embed. */
    public WorkerView(String id, Role role, String model, int blockSize, String kvLayout, String endpoint,
                      State state, boolean routable, Optional<WorkerTiming> timing, int totalKvBlocks,
                      LoadReport load, KvTierLinks tiers, WorkerAdapters adapters, Isolation isolation) {
        this(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing, totalKvBlocks, load, tiers,
                adapters, isolation, false);
    }

    /** A worker without adapters that advertises no tenant isolation. */
    public WorkerView(String id, Role role, String model, int blockSize, String kvLayout, String endpoint,
                      State state, boolean routable, Optional<WorkerTiming> timing, int totalKvBlocks,
                      LoadReport load, KvTierLinks tiers) {
        this(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing, totalKvBlocks, load, tiers,
                WorkerAdapters.NONE, Isolation.NONE);
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
        isolation = isolation == null ? Isolation.NONE : isolation;
        if (blockSize <= 0 || totalKvBlocks < 0) {
            throw new IllegalArgumentException("worker " + id + ": block size must be positive, capacity not negative");
        }
    }

    /** A worker without lower KV tiers. */
    public WorkerView(String id, Role role, String model, int blockSize, String kvLayout, String endpoint,
                      State state, boolean routable, Optional<WorkerTiming> timing, int totalKvBlocks,
                      LoadReport load) {
        this(id, role, model, blockSize, kvLayout, endpoint, state, routable, timing, totalKvBlocks, load,
                KvTierLinks.NONE);
    }

    /** A worker's role as its status states it; UNSPECIFIED counts as aggregated. */
    public enum Role { UNSPECIFIED, AGGREGATED, PREFILL, DECODE }

    /** A worker's lifecycle state; only READY takes new requests. */
    public enum State { UNSPECIFIED, STARTING, READY, DRAINING, STOPPED, UNHEALTHY }

    /** How a worker's engine keeps tenants' KV apart; NONE takes no tenant-salted request. */
    public enum Isolation { NONE, SALT_ALL_BLOCKS, SALT_AFTER_PUBLIC_PREFIX }

    /** READY and routable: the only workers a decision may name. */
    public boolean acceptsRequests() {
        return routable && state == State.READY;
    }

    /** Whether its engine keeps a tenant-salted request's KV apart from every other tenant's. */
    public boolean isolatesTenants() {
        return isolation != Isolation.NONE;
    }

    /** Runs prefill only. */
    public boolean isPrefill() {
        return role == Role.PREFILL;
    }

    /** Decodes with KV handed over from a prefill worker (and prefills itself when not given one). */
    public boolean isDecode() {
        return role == Role.DECODE;
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

    public WorkerView withState(State newState) {
        return new WorkerView(id, role, model, blockSize, kvLayout, endpoint, newState, routable, timing,
                totalKvBlocks, load, tiers, adapters, isolation);
    }
}
