package io.flotilla.router.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * One term of the routing cost, registered by name in {@link PluginRegistry}. A scorer returns an
 * unweighted cost (lower is better) in the context's unit and holds no weight and no state; {@link CostModel}
 * applies weights from configuration. Contract: pure, finite, non-negative.
 */
public interface Scorer {

    /** What a worker does for the request in a pool: prefill workers only prefill, decode workers only decode. */
    enum Phase { PREFILL, DECODE }

    /** The signals this scorer reads; the shell fetches only what some scorer requires. */
    Set<Signal> requires();

    double cost(ScoringContext context, Candidate candidate);

    /** The name configuration and logs refer to it by. */
    String name();

    /**
     * The phases this term prices: a prefill pool is priced by the PREFILL terms, a decode pool (its prompt
     * prefilled elsewhere) by the DECODE terms, an aggregated pool by all.
     */
    default Set<Phase> phases() {
        return EnumSet.allOf(Phase.class);
    }

    /** This term when no cached prefix may be credited ({@code load} mode, or {@code kv} without overlap data). */
    default Scorer withoutCacheCredit() {
        return this;
    }

    /** The request being priced and the unit this decision prices in. */
    record ScoringContext(RoutingRequest request, CostUnit unit) {
    }
}
