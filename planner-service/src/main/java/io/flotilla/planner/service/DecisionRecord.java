package io.flotilla.planner.service;

import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.plan.ScalingDecision;
import io.flotilla.protocol.v1.PlannerDecision;

/**
 * One decision as the loop applied and published it.
 *
 * @param decision  what the planner decided
 * @param connector the connector that applied it
 * @param applied   what the connector set; null when nothing was applied (shadow, failure)
 * @param published the record sent to {@code flotilla.planner-decisions}
 */
public record DecisionRecord(ScalingDecision decision, String connector, PoolCounts applied, PlannerDecision published) {

    public static DecisionRecord of(ScalingDecision decision, String connector, PoolCounts applied) {
        return new DecisionRecord(decision, connector, applied, decision.toProto(connector, applied));
    }

    /** The planner's targets (managed pools only). */
    public PoolCounts targets() {
        return decision.targets();
    }

    /** READY workers per pool when it was decided. */
    public PoolCounts ready() {
        return decision.observed().ready();
    }
}
