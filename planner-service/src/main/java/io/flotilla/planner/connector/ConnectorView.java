package io.flotilla.planner.connector;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;

import java.util.Set;

/**
 * What a connector sees of the world it scales.
 *
 * @param current       replicas each pool it manages is set to (pending planner changes included)
 * @param changedByHand pools whose replicas someone other than the planner changed since it last applied
 * @param notWhole      workers whose instance spans several pods and has a rank missing or not Ready: they count as
 *                      starting, not ready, whatever their own state
 */
public record ConnectorView(PoolCounts current, Set<Pool> changedByHand, Set<String> notWhole) {

    public static final ConnectorView UNKNOWN = new ConnectorView(PoolCounts.NONE, Set.of());

    public ConnectorView {
        changedByHand = Set.copyOf(changedByHand);
        notWhole = Set.copyOf(notWhole);
    }

    /** Every instance one pod (or none known to be incomplete). */
    public ConnectorView(PoolCounts current, Set<Pool> changedByHand) {
        this(current, changedByHand, Set.of());
    }
}
