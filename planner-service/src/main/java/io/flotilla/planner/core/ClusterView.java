package io.flotilla.planner.core;

import java.util.Set;

/**
 * Everything {@code Planner.plan} decides from.
 *
 * @param observed      the interval that just ended (ready replicas included)
 * @param current       replicas each managed pool is set to now, as the connector reports it (a Deployment's
 *                      spec.replicas, the live local workers); {@link PoolCounts#NONE} when the connector cannot
 *                      tell (shadow): the planner then continues from its own last targets
 * @param changedByHand pools whose replicas were changed by someone other than the planner since it last
 *                      applied; the planner adopts {@code current} for them and holds off
 */
public record ClusterView(Observation observed, PoolCounts current, Set<Pool> changedByHand) {

    public ClusterView {
        changedByHand = Set.copyOf(changedByHand);
    }

    public static ClusterView of(Observation observed) {
        return new ClusterView(observed, PoolCounts.NONE, Set.of());
    }
}
