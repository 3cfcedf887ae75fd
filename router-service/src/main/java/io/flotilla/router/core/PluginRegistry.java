package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.random.RandomGenerator;

/**
 * Filters, scorers and pickers by name, and the assembly of a {@link PolicySpec} from them. A new signal
 * is one {@link Scorer} class registered here and named in configuration; the policy is not edited.
 * Immutable: {@link #withScorer} and {@link #withFilter} return a new registry.
 */
public final class PluginRegistry {

    private static final PluginRegistry STANDARD = new PluginRegistry(Map.of(), Map.of())
            .withFilter("eligible", EligibleFilter::new)
            .withFilter("lora", LoraFilter::new)
            .withFilter("tenancy", TenancyFilter::new)
            .withScorer("prefill", PrefillScorer::withCacheCredit)
            .withScorer("lora-load", AdapterLoadScorer::new)
            .withScorer("decode-load", DecodeLoadScorer::new)
            .withScorer("queue", QueueWaitScorer::new)
            .withScorer("lora-eviction", LoraEvictionScorer::new);

    private final Map<String, Supplier<Filter>> filters;
    private final Map<String, Supplier<Scorer>> scorers;

    private PluginRegistry(Map<String, Supplier<Filter>> filters, Map<String, Supplier<Scorer>> scorers) {
        this.filters = Collections.unmodifiableMap(new LinkedHashMap<>(filters));
        this.scorers = Collections.unmodifiableMap(new LinkedHashMap<>(scorers));
    }

    /** The built-in plugins: filters {@code eligible, lora, tenancy}; scorers {@code prefill, lora-load, decode-load, queue, lora-eviction}. */
    public static PluginRegistry standard() {
        return STANDARD;
    }

    public PluginRegistry withFilter(String name, Supplier<Filter> factory) {
        Map<String, Supplier<Filter>> f = new LinkedHashMap<>(filters);
        f.put(name, factory);
        return new PluginRegistry(f, scorers);
    }

    public PluginRegistry withScorer(String name, Supplier<Scorer> factory) {
        Map<String, Supplier<Scorer>> s = new LinkedHashMap<>(scorers);
        s.put(name, factory);
        return new PluginRegistry(filters, s);
    }

    public Filter filter(String name) {
        Supplier<Filter> f = filters.get(name);
        if (f == null) {
            throw new IllegalArgumentException("unknown routing filter '" + name + "'; known: " + filters.keySet());
        }
        return f.get();
    }

    public Scorer scorer(String name) {
        Supplier<Scorer> s = scorers.get(name);
        if (s == null) {
            throw new IllegalArgumentException("unknown routing scorer '" + name + "'; known: " + scorers.keySet());
        }
        return s.get();
    }

    /**
     * The picker a mode picks with: {@code by-cost} (argmin at temperature 0, else softmax) for kv and load,
     * {@code round-robin} and {@code random} for the baselines.
     */
    public static Picker picker(Strategy strategy, double temperature, RandomGenerator random) {
        return switch (strategy) {
            case ROUND_ROBIN -> Picker.roundRobin();
            case RANDOM -> Picker.uniform(random);
            case KV, LOAD -> Picker.byCost(temperature, random);
        };
    }

    /** The plugins {@code spec} names, with {@link FilterChain#STANDARD} ahead of its filters. */
    ModelPolicy assemble(PolicySpec spec, boolean prunable) {
        List<Filter> chain = new ArrayList<>(FilterChain.STANDARD.filters());
        for (String name : spec.filters()) {
            if (!FilterChain.STANDARD.names().contains(name)) {
                chain.add(filter(name));
            }
        }
        List<CostModel.Weighted> terms = new ArrayList<>(spec.scorers().size());
        for (PolicySpec.Term t : spec.scorers()) {
            terms.add(new CostModel.Weighted(scorer(t.scorer()), t.weight()));
        }
        return new ModelPolicy(new FilterChain(chain), terms, prunable);
    }
}
