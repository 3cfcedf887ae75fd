package io.flotilla.router.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * Admission delay from requests already waiting on the worker (their prompt tokens are priced by
 * {@link PrefillScorer}; this term prices the per-request engine passes).
 *
 * <pre>
 * W = waiting requests in the last load report
 * ms:     W · decode_ms(B / totalKvBlocks)   each waiting request ahead holds admission for at least
 *                                           one engine step at the worker's current step time
 * blocks: W                                  one block-equivalent per waiting request
 * </pre>
 */
public final class QueueWaitScorer implements Scorer {

    @Override
    public Set<Signal> requires() {
        return EnumSet.of(Signal.LOAD, Signal.TIMING);
    }

    @Override
    public double cost(ScoringContext ctx, Candidate c) {
        if (c.waiting() == 0) {
            return 0;
        }
        if (ctx.unit() == CostUnit.MILLISECONDS) {
            WorkerTiming t = c.worker().timing().orElseThrow();
            return c.waiting() * t.decodeMs(c.kvUsage(0));
        }
        return c.waiting();
    }

    @Override
    public String name() {
        return "queue";
    }
}
