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
 * @param shortfall       how far the request-rate forecasts ran below what came (the conservative-mode measure)
 * @param conservative    whether scale-down was blocked because the forecasts ran short
 */
public record DecisionRecord(PlannerDecision decision, PoolCounts targets, PoolCounts applied, PoolCounts ready,
                             double predictionError, double shortfall, boolean conservative) {
}
