package io.flotilla.router.core;

import java.util.EnumSet;
import java.util.Set;

/**
 * What loading the request's adapter costs the worker's other traffic: a worker whose adapter slots are all
 * taken unloads its least recently used idle adapter to load this one, and the next request for that adapter
 * pays a load again. Zero for the base model, on workers that have the adapter loaded, and on workers with a
 * free slot (or that do not say how many they hold), so it steers loads toward free slots.
 *
 * <pre>
 * evicts_i = adapter not loaded on i ∧ maxLoaded_i &gt; 0 ∧ |loaded_i| ≥ maxLoaded_i
 * ms:     evicts_i ? loadMs_i : 0                 the evicted adapter's next load
 * blocks: evicts_i ? max(1, ⌈P / bs⌉) : 0         priced like {@link AdapterLoadScorer}'s load
 * </pre>
 *
 * Not in the standard policy: configured as {@code flotilla.router.policy.<model or default>.scorers.lora-eviction}.
 */
public final class LoraEvictionScorer implements Scorer {

    @Override
    public Set<Signal> requires() {
        return EnumSet.of(Signal.TIMING);
    }

    @Override
    public double cost(ScoringContext ctx, Candidate c) {
        RoutingRequest r = ctx.request();
        WorkerAdapters a = c.worker().adapters();
        if (a.hasLoaded(r.loraName()) || a.maxLoaded() <= 0 || a.loaded().size() < a.maxLoaded()) {
            return 0;
        }
        if (ctx.unit() == CostUnit.MILLISECONDS) {
            return a.loadMs();
        }
        return Math.max(1, ((long) r.islTokens() + r.blockSize() - 1) / r.blockSize());
    }

    @Override
    public String name() {
        return "lora-eviction";
    }
}
