package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A weighted sum of scorers: {@code cost(r, i) = Σ weight_k · scorer_k(r, i)}. Weights come from
 * configuration ({@link PolicySpec}) and live only here. Scorers with weight 0 are dropped (and so are
 * their signals).
 */
public final class CostModel {

    /** A scorer and its configured weight (≥ 0). */
    public record Weighted(Scorer scorer, double weight) {
        public Weighted {
            if (!(weight >= 0) || Double.isInfinite(weight)) {
                throw new IllegalArgumentException("weight must be finite and >= 0: " + weight);
            }
        }
    }

    private final Weighted[] terms;

    public CostModel(List<Weighted> terms) {
        List<Weighted> kept = new ArrayList<>();
        for (Weighted w : terms) {
            if (w.weight() > 0) {
                kept.add(w);
            }
        }
        this.terms = kept.toArray(new Weighted[0]);
    }

    public Set<Signal> requires() {
        Set<Signal> s = EnumSet.noneOf(Signal.class);
        for (Weighted w : terms) {
            s.addAll(w.scorer().requires());
        }
        return s;
    }

    /** Cost of one candidate, in {@code unit}. */
    public double cost(RoutingRequest request, CostUnit unit, Candidate c) {
        Scorer.ScoringContext ctx = new Scorer.ScoringContext(request, unit);
        double sum = 0;
        for (Weighted w : terms) {
            sum += w.weight() * w.scorer().cost(ctx, c);
        }
        return sum;
    }

    /** Cost of every candidate, in {@code unit}; index-aligned with {@code candidates}. */
    public double[] costs(RoutingRequest request, CostUnit unit, List<Candidate> candidates) {
        Scorer.ScoringContext ctx = new Scorer.ScoringContext(request, unit);
        double[] out = new double[candidates.size()];
        for (int i = 0; i < out.length; i++) {
            Candidate c = candidates.get(i);
            double sum = 0;
            for (Weighted w : terms) {
                sum += w.weight() * w.scorer().cost(ctx, c);
            }
            out[i] = sum;
        }
        return out;
    }

    @Override
    public String toString() {
        return Arrays.stream(terms).map(w -> w.weight() + "·" + w.scorer().name()).collect(Collectors.joining(" + "));
    }
}
