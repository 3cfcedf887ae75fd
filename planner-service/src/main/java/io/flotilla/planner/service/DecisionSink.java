package io.flotilla.planner.service;

import io.flotilla.protocol.v1.PlannerDecision;

/** Where decisions are published (port): {@code flotilla.planner-decisions} keyed by model. */
public interface DecisionSink {

    /** Hands the decision over without blocking the planner for long; failures are the sink's to log. */
    void publish(PlannerDecision decision);
}
