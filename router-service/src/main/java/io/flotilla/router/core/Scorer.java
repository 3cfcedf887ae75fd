package io.flotilla.router.core;

import java.util.Set;

/**
 * One term of the routing cost. A scorer returns an unweighted cost (lower is better) in the
 * context's unit and holds no weight and no state; {@link CostModel} applies weights from
 * configuration. Contract: pure, finite, non-negative.
 */
public interface Scorer {

    /** The signals this scorer reads; the shell fetches only what some scorer requires. */
    Set<Signal> requires();

    double cost(ScoringContext context, Candidate candidate);

    /** Short name used in logs and in {@link CostModel#toString()}. */
    String name();

    /** The request being priced and the unit this decision prices in. */
    record ScoringContext(RoutingRequest request, CostUnit unit) {
    }
}
