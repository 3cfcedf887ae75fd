package io.flotilla.bench.client;

import java.util.List;

/**
 * What {@code bench compare} needs from the cluster besides the gateway: the router's mode and a way
 * to start every run with cold prefix caches.
 */
public interface ClusterAdmin extends AutoCloseable {

    /** The router's current routing mode, or {@code "unknown"} when the router cannot be asked. */
    String routerMode();

    /** Switches the router's mode; fails when the router refuses or cannot be reached. */
    void setRouterMode(String mode);

    /** Live workers as the router lists them. */
    List<Worker> workers();

    /** Drops the worker's unreferenced cached blocks; returns how many were dropped. */
    int clearKvCache(Worker worker);

    /**
     * The worker's KV tiers (device first): capacity in blocks and prompt tokens found there since its
     * start; empty when the cluster does not say.
     */
    default List<TierCount> kvTiers(Worker worker) {
        return List.of();
    }

    /** One tier of one worker: {@code tier} is device, host or disk. */
    record TierCount(String tier, long capacityBlocks, long hitTokens) {
    }

    @Override
    default void close() {
    }

    /** A worker: id, gRPC {@code host:port}, role name. */
    record Worker(String id, String endpoint, String role) {
    }
}
