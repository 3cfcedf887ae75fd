package io.flotilla.planner.service;

import io.flotilla.planner.core.PoolCounts;
import io.flotilla.protocol.v1.PlannerDecision;

/**
 * One decision as kept in the history: the published record plus what the contract does not carry.
 *
 * @param decision        what was published to {@code flotilla.planner-decisions}
 * @param targets         the planner's targets (managed pools only)
 * @param applied         what the connector set; null when nothing was applied (shadow, failure)
 * @param ready           READY workers per pool when it was decided
 * @param predictionError sMAPE of the request-rate forecast
 * @param conservative    whether scale-down was blocked by the prediction error
 */
public record DecisionRecord(PlannerDecision decision, PoolCounts targets, PoolCounts applied, PoolCounts ready,
                             double predictionError, boolean conservative) {
}
