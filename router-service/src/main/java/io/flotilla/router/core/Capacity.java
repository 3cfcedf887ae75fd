package io.flotilla.router.core;

import java.util.List;
import java.util.Objects;

/**
 * One model's capacity as {@code Route} sees it at this moment: the same merge of load reports and
 * bookings ({@link Candidate#of}) and the same busy thresholds ({@link BusyDetector}) a decision uses,
 * computed by {@link RoutingPolicy#capacity}. Immutable.
 *
 * @param saturated   a Route for this model would answer busy now: its serving pool (the routable decode
 *                    workers, else the routable aggregated ones) is not empty and every worker in it is busy
 * @param freeWorkers workers of that serving pool not over their busy thresholds
 * @param workers     every known worker of the model, routable or not, sorted by id
 */
public record Capacity(String model, boolean saturated, int freeWorkers, List<Headroom> workers) {

    public Capacity {
        Objects.requireNonNull(model, "model");
        workers = List.copyOf(workers);
    }

    /**
     * One worker's load as the router counts it.
     *
     * @param busy                over its busy thresholds: Route would not choose it
     * @param activeBlocks        KV blocks in use: the last report plus bookings since ({@link Candidate#decodeBlocks})
     * @param queuedPrefillTokens prompt tokens queued ahead ({@link Candidate#queuedPrefillTokens})
     * @param queuedPrefills      prompts those tokens belong to ({@link Candidate#queuedPrefills})
     */
    public record Headroom(WorkerView worker, boolean busy, long activeBlocks, long queuedPrefillTokens,
                           int queuedPrefills) {
        public Headroom {
            Objects.requireNonNull(worker, "worker");
        }
    }
}
