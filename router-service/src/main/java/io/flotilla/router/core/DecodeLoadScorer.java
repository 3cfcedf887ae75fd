package io.flotilla.router.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * How loaded a worker's decode batch is.
 *
 * <pre>
 * B = decode blocks in use = merge(report.activeKvBlocks, booked decode blocks)
 * n = ⌈(isl + osl)/bs⌉ − ⌊H/bs⌋  the blocks this request adds here (its cached prefix is already resident)
 * ms:     decode_ms((B + n) / totalKvBlocks)   the step time (inter-token latency) the worker would run
 *                                              at with this request in
 * blocks: B
 * </pre>
 */
public final class DecodeLoadScorer implements Scorer {

    @Override
    public Set<Signal> requires() {
        return EnumSet.of(Signal.LOAD, Signal.TIMING);
    }

    @Override
    public double cost(ScoringContext ctx, Candidate c) {
        if (ctx.unit() == CostUnit.MILLISECONDS) {
            WorkerTiming t = c.worker().timing().orElseThrow();
            return t.decodeMs(c.kvUsage(c.newBlocks(ctx.request())));
        }
        return c.decodeBlocks();
    }

    @Override
    public String name() {
        return "decode-load";
    }

    @Override
    public Set<Phase> phases() {
        return EnumSet.of(Phase.DECODE);
    }
}
