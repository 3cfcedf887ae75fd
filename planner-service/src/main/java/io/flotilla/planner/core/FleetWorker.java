package io.flotilla.planner.core;

import io.flotilla.protocol.v1.WorkerState;

/**
 * One worker of the planned model as membership shows it now (lease still valid).
 *
 * @param id       worker id (the pod name on Kubernetes, {@code worker-N} in a local cluster)
 * @param pool     the pool of its role
 * @param state    its membership state
 * @param endpoint host:port of its WorkerService (Drain goes there)
 * @param running  requests running on it at its last load report (0 without one)
 * @param since    epoch millis of its first status in the current epoch (when it registered)
 */
public record FleetWorker(String id, Pool pool, WorkerState state, String endpoint, int running, long since) {

    public boolean ready() {
        return state == WorkerState.WORKER_STATE_READY;
    }

    /** STARTING or READY: counts towards a pool's size (DRAINING, STOPPED, UNHEALTHY do not). */
    public boolean live() {
        return state == WorkerState.WORKER_STATE_READY || state == WorkerState.WORKER_STATE_STARTING;
    }
}
