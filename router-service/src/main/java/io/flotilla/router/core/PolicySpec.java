package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What one routing policy is made of, by plugin name: its filters (after {@link FilterChain#STANDARD}, which
 * every policy applies) and its scorers with their weights, in the order their terms are summed.
 * {@link PluginRegistry#assemble} turns it into plugins. The picker is the mode's ({@link Strategy}).
 */
public record PolicySpec(List<String> filters, List<Term> scorers) {

    /** A scorer's name and its weight (finite, ≥ 0; 0 drops the term). */
    public record Term(String scorer, double weight) {
        public Term {
            Objects.requireNonNull(scorer, "scorer");
            if (!(weight >= 0) || Double.isInfinite(weight)) {
                throw new IllegalArgumentException("weight of scorer '" + scorer + "' must be finite and >= 0: " + weight);
            }
        }
    }

    /**
     * What a policy section changes: filters added after the standard ones, and scorer weights (a named
     * scorer not in the policy yet joins it; weight 0 removes one).
     */
    public record Section(List<String> filters, Map<String, Double> scorers) {
        public static final Section NONE = new Section(List.of(), Map.of());

        public Section {
            if (scorers != null) {
                scorers.forEach((name, weight) -> {
                    if (weight == null) {
                        throw new IllegalArgumentException("scorer '" + name + "' has no weight");
                    }
                });
            }
            filters = filters == null ? List.of() : List.copyOf(filters);
            scorers = scorers == null ? Map.of() : java.util.Collections.unmodifiableMap(new LinkedHashMap<>(scorers));
        }
    }

    /** The key of the section every model's policy starts from. */
    public static final String DEFAULT = "default";

    public PolicySpec {
        filters = List.copyOf(filters);
        scorers = List.copyOf(scorers);
    }

    /**
     * The cost formula {@code w_prefill·(prefill + lora-load) + w_decode·decode-load + w_queue·queue}
     * (a LoRA load delays the first token exactly as prefill does, so it shares the prefill weight).
     */
    public static PolicySpec standard(RouterConfig.Weights w) {
        return new PolicySpec(List.of(), List.of(new Term("prefill", w.prefill()), new Term("lora-load", w.prefill()),
                new Term("decode-load", w.decode()), new Term("queue", w.queue())));
    }

    /** This spec with {@code o} applied. */
    public PolicySpec with(Section o) {
        List<String> f = new ArrayList<>(filters);
        for (String name : o.filters()) {
            if (!f.contains(name)) {
                f.add(name);
            }
        }
        Map<String, Double> weights = new LinkedHashMap<>();
        for (Term t : scorers) {
            weights.put(t.scorer(), t.weight());
        }
        weights.putAll(o.scorers());
        List<Term> terms = new ArrayList<>(weights.size());
        weights.forEach((name, weight) -> terms.add(new Term(name, weight)));
        return new PolicySpec(f, terms);
    }

    /** The spec for {@code model}: the standard formula, then the default section, then the model's own. */
    public static PolicySpec forModel(String model, RouterConfig.Weights weights, Map<String, Section> sections) {
        return standard(weights).with(sections.getOrDefault(DEFAULT, Section.NONE))
                .with(sections.getOrDefault(model, Section.NONE));
    }
}
