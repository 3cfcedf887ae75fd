package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * One model's assembled policy: its filters and, from its weighted scorers, the cost of each pool. The
 * aggregated pool is priced by every term, the prefill pool by the PREFILL terms and the decode pool (its
 * prompt prefilled elsewhere) by the DECODE terms ({@link Scorer#phases()}); each with and without cache
 * credit ({@link Scorer#withoutCacheCredit()}).
 *
 * @param prunable the terms are the standard formula's with the configured weights, so the candidate set's
 *                 guarantee ({@link CandidateSet}) holds for them
 */
record ModelPolicy(FilterChain filters, CostModel full, CostModel fullNoCredit, CostModel prefill,
                   CostModel prefillNoCredit, CostModel decode, boolean prunable) {

    ModelPolicy(FilterChain filters, List<CostModel.Weighted> terms, boolean prunable) {
        this(filters, new CostModel(terms), new CostModel(withoutCredit(terms)),
                new CostModel(inPhase(terms, Scorer.Phase.PREFILL)),
                new CostModel(withoutCredit(inPhase(terms, Scorer.Phase.PREFILL))),
                new CostModel(inPhase(terms, Scorer.Phase.DECODE)), prunable);
    }

    CostModel full(boolean credit) {
        return credit ? full : fullNoCredit;
    }

    CostModel prefill(boolean credit) {
        return credit ? prefill : prefillNoCredit;
    }

    /** The signals a decision in this mode reads: with cache credit ({@code kv}) or without ({@code load}). */
    Set<Signal> requires(boolean credit) {
        Set<Signal> s = EnumSet.noneOf(Signal.class);
        s.addAll(full(credit).requires());
        s.addAll(prefill(credit).requires());
        s.addAll(decode.requires());
        return s;
    }

    private static List<CostModel.Weighted> inPhase(List<CostModel.Weighted> terms, Scorer.Phase phase) {
        List<CostModel.Weighted> out = new ArrayList<>();
        for (CostModel.Weighted w : terms) {
            if (w.scorer().phases().contains(phase)) {
                out.add(w);
            }
        }
        return out;
    }

    private static List<CostModel.Weighted> withoutCredit(List<CostModel.Weighted> terms) {
        List<CostModel.Weighted> out = new ArrayList<>(terms.size());
        for (CostModel.Weighted w : terms) {
            out.add(new CostModel.Weighted(w.scorer().withoutCacheCredit(), w.weight()));
        }
        return out;
    }
}
