package io.flotilla.planner.connector;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.PoolCounts;

import java.util.Optional;

/**
 * Applies replica targets to the world (port; in-memory fake in the tests). Contract:
 * <ul>
 *   <li>only the pools named in the targets are touched;</li>
 *   <li>scale-down always drains ({@code WorkerService.Drain}: the worker turns DRAINING, routers stop
 *       sending it requests, in-flight requests finish) and never kills a serving worker;</li>
 *   <li>replicas changed by hand are reported in {@link #observe} and not fought;</li>
 *   <li>nothing in the request path depends on a connector: if the planner stops, the world stays as it is.</li>
 * </ul>
 * Called from one planning thread.
 */
public interface ScalingConnector extends AutoCloseable {

    /** {@code shadow}, {@code local} or {@code kubernetes}. */
    String name();

    /** Current replicas and hand-made changes; {@link ConnectorView#UNKNOWN} when the connector cannot tell. */
    ConnectorView observe(Fleet fleet);

    /**
     * Starts moving the pools towards {@code targets} (a drain-then-scale-down may finish later).
     *
     * @return the replicas it set or started setting; empty when it applies nothing (shadow)
     */
    Optional<PoolCounts> apply(PoolCounts targets, Fleet fleet);

    @Override
    default void close() {
    }
}
