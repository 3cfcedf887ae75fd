package io.flotilla.router.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * What a LoRA adapter load adds before the request's first token on a worker that can serve the adapter
 * but has not loaded it. Zero for the base model and on workers that have it loaded, so those are
 * preferred whenever the load costs more than the difference in their other terms.
 *
 * <pre>
 * loaded_i = the request's adapter is in worker i's loaded set (or the request runs on the base model)
 * ms:     loaded_i ? 0 : loadMs_i                    (advertised: measured by the worker, else configured)
 * blocks: loaded_i ? 0 : max(1, ⌈P / bs⌉)            a load is priced like a cold prefill of the prompt
 * </pre>
 *
 * It delays the first token exactly as prefill does, so the standard policy weighs it with the prefill weight.
 */
public final class AdapterLoadScorer implements Scorer {

    @Override
    public Set<Signal> requires() {
        return EnumSet.of(Signal.TIMING);
    }

    @Override
    public double cost(ScoringContext ctx, Candidate c) {
        RoutingRequest r = ctx.request();
        if (c.worker().adapters().hasLoaded(r.loraName())) {
            return 0;
        }
        if (ctx.unit() == CostUnit.MILLISECONDS) {
            return c.worker().adapters().loadMs();
        }
        return Math.max(1, ((long) r.islTokens() + r.blockSize() - 1) / r.blockSize());
    }

    @Override
    public String name() {
        return "lora-load";
    }
}
