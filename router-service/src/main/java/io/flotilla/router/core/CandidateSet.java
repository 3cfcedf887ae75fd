package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * The workers a pruned decision scores: every eligible, free (not busy) worker that holds any of the
 * prompt's blocks, plus the {@code k} least-loaded eligible free workers that hold none, read in order from
 * the snapshot's {@link WorkerRanking} (walking on past ineligible and busy ones: never a scan of the fleet
 * unless every one of them is filtered out). Each is priced from the same view, bookings and overlap, in
 * the same unit, as the full scan would price it, so costs in the set are the full scan's costs.
 *
 * <p><b>Guarantee</b> (greedy picking, {@link Picker#argmin}; a ranking as fresh as the snapshot — one that
 * lags a booking or a report can only give a worse route for that decision). Let C be the set, K ⊆ C its least-loaded part,
 * key_i worker i's load cost ({@link WorkerRanking#loadCost}: its cost for an empty request) and
 * δ_i = cost_i(r) − key_i what request r adds to it.
 * <ol>
 *   <li>When the full scan's choice f is in C, the pruned decision is f: the picker's order (cost, then
 *       {@link Candidate#loadRank()}, then id) is total, and costs in C are the full scan's.</li>
 *   <li>Otherwise f holds none of the prompt (all holders are in C) and key_f ≥ key_m for every m in K, so
 *   <pre>
 *   cost(pruned) ≤ min_{m∈K} (key_m + δ_m) ≤ key_f + min_{m∈K} δ_m = cost(f) + min_{m∈K} δ_m − δ_f
 *   cost(pruned) − cost(f) ≤ Δ = max δ − min δ   over the eligible free workers that hold none of the prompt
 *   </pre>
 *   where, for such a worker (P prompt tokens, n = ⌈(P + osl)/bs⌉ blocks, u_i = B_i / cap_i),
 *   <pre>
 *   blocks: δ_i = w_p · (P/bs + adapter_i)          adapter_i = 0 if loaded, else max(1, ⌈P/bs⌉)
 *   ms:     δ_i = w_p · (prefill_ms_i(P) + adapter_ms_i) + w_d · (decode_ms_i(u_i + n/cap_i) − decode_ms_i(u_i))
 *   </pre>
 *   In blocks a base-model request has Δ = 0: the pruned decision always costs what the full scan's does.
 *   In ms, with one timing profile and capacity, prefill_ms(P) is common to all and
 *   <pre>
 *   Δ ≤ w_p · max_i adapter_ms_i + w_d · (n/cap) · (|d1| + 2·|d2|) / speedup
 *   </pre>
 *   (decode_ms's steepest slope on [0, 1]; twice that if decode_ms is not monotone there): 0.93 ms, one
 *   decode step's worth, for a 2,048 + 256-token base-model request on the reference profile with 16,384
 *   blocks. Workers of different timing profiles add the spread of w_p · prefill_ms_i(P) to Δ.</li>
 * </ol>
 * A holder whose cost provably exceeds the cheapest candidate found so far is not priced (it could not be
 * picked): its cost is at least key_j + w_p · prefill(P − H_j), H_j its prefix in any tier, when its
 * timing is monotone (prefill: a, b ≥ 0; decode: d1 ≥ 0 and d1 + 2·d2 ≥ 0; in blocks always). That
 * changes which workers are priced, not the pick, so a prefix held by much of the fleet costs a lookup
 * per holder rather than a pricing.
 *
 * <p>{@code PrunedDecisionPropertyTest} checks both against the full scan over random fleets.
 */
final class CandidateSet {

    /** The pool to score, in id order, with its costs and unit; or no pool and why the decision must scan. */
    record Collected(List<Candidate> pool, double[] costs, CostUnit unit, int walked, Scan.FullScan fullScan) {
        static Collected scan(Scan.FullScan why, int walked) {
            return new Collected(null, null, CostUnit.BLOCKS, walked, why);
        }
    }

    private record Priced(Candidate candidate, double cost) {
    }

    private static final Comparator<Priced> BY_ID = Comparator.comparing(p -> p.candidate().id());

    /** A holder is skipped only when its lower bound exceeds the best cost by more than this (relative). */
    private static final double SKIP_SLACK = 1e-6;

    private final int leastLoaded;
    private final BusyDetector busy;
    private final LoadMerge merge;
    private final double prefillWeight;

    CandidateSet(int leastLoaded, BusyDetector busy, LoadMerge merge, RouterConfig.Weights weights) {
        this.leastLoaded = leastLoaded;
        this.busy = busy;
        this.merge = merge;
        this.prefillWeight = weights.prefill();
    }

    /**
     * @param filters the model's policy's filters
     * @param model   the cost the decision picks by (with cache credit when {@code credit})
     */
    Collected collect(RoutingRequest request, ClusterSnapshot snapshot, boolean credit, FilterChain filters,
                      CostModel model) {
        WorkerRanking ranking = snapshot.ranking();
        if (!ranking.ranks()) {
            return Collected.scan(Scan.FullScan.UNRANKED, 0);
        }
        if (ranking.disaggregated(request.model(), request.blockSize())) {
            return Collected.scan(Scan.FullScan.DISAGGREGATED, 0);
        }
        CostUnit unit = unitOf(request, filters, ranking.unpriced(request.model(), request.blockSize()));
        List<Priced> chosen = new ArrayList<>(leastLoaded + 16);
        double best = Double.POSITIVE_INFINITY;
        Iterator<WorkerRanking.Ranked> ascending = ranking.ascending(request.model(), request.blockSize(), unit);
        int walked = 0;
        while (chosen.size() < leastLoaded && ascending.hasNext()) {
            WorkerRanking.Ranked r = ascending.next();
            walked++;
            if ((credit && holds(snapshot, r.id())) || !filters.admits(request, r.view())) {
                continue;
            }
            Candidate c = candidate(request, r, KvOverlap.NONE);
            if (!isBusy(c)) {
                double cost = model.cost(request, unit, c);
                chosen.add(new Priced(c, cost));
                best = Math.min(best, cost);
            }
        }
        if (credit) {
            best = addHolders(request, snapshot, unit, filters, model, chosen, best);
        }
        if (chosen.isEmpty()) {
            return Collected.scan(Scan.FullScan.NO_FREE_CANDIDATE, walked);
        }
        chosen.sort(BY_ID);
        List<Candidate> pool = new ArrayList<>(chosen.size());
        double[] costs = new double[chosen.size()];
        for (int i = 0; i < costs.length; i++) {
            pool.add(chosen.get(i).candidate());
            costs[i] = chosen.get(i).cost();
        }
        return new Collected(pool, costs, unit, walked, Scan.FullScan.NONE);
    }

    private static boolean holds(ClusterSnapshot snapshot, String id) {
        return snapshot.overlapBlocks().containsKey(id) || snapshot.tiered().containsKey(id);
    }

    /**
     * Prices the eligible free holders that could beat {@code best}; returns the new best. Holders are ranked
     * when they are aggregated workers of the request's group; others are not candidates. The bound is
     * checked first: it reads only the ranked entry, so a holder that cannot win costs two lookups.
     */
    private double addHolders(RoutingRequest request, ClusterSnapshot snapshot, CostUnit unit, FilterChain filters,
                              CostModel model, List<Priced> chosen, double best) {
        Map<String, KvOverlap> tiered = snapshot.tiered();
        for (Map.Entry<String, Integer> e : snapshot.overlapBlocks().entrySet()) {
            KvOverlap lower = tiered.isEmpty() ? null : tiered.get(e.getKey());
            best = addHolder(request, snapshot, e.getKey(),
                    lower != null ? lower : KvOverlap.deviceOnly(Math.max(0, e.getValue())), unit, filters, model, chosen,
                    best);
        }
        for (Map.Entry<String, KvOverlap> e : tiered.entrySet()) {
            if (!snapshot.overlapBlocks().containsKey(e.getKey())) {
                best = addHolder(request, snapshot, e.getKey(), e.getValue(), unit, filters, model, chosen, best);
            }
        }
        return best;
    }

    private double addHolder(RoutingRequest request, ClusterSnapshot snapshot, String id, KvOverlap overlap,
                             CostUnit unit, FilterChain filters, CostModel model, List<Priced> chosen, double best) {
        WorkerRanking.Ranked r = snapshot.ranking().get(id);
        if (r == null || lowerBound(request, r, overlap, unit) > best + SKIP_SLACK * Math.max(1, Math.abs(best))
                || !filters.admits(request, r.view())) {
            return best;
        }
        Candidate c = candidate(request, r, overlap);
        if (isBusy(c)) {
            return best;
        }
        double cost = model.cost(request, unit, c);
        chosen.add(new Priced(c, cost));
        return Math.min(best, cost);
    }

    /**
     * At most the worker's cost for this request: its load cost plus the prefill of what its prefix in any
     * tier leaves; −∞ when its timing is not monotone (then it is always priced).
     */
    private double lowerBound(RoutingRequest request, WorkerRanking.Ranked r, KvOverlap overlap, CostUnit unit) {
        long rest = request.islTokens() - request.cachedTokens(overlap.anyTier());
        if (unit == CostUnit.BLOCKS) {
            return r.blocksCost() + prefillWeight * rest / request.blockSize();
        }
        WorkerTiming t = r.monotone();
        return t == null || Double.isNaN(r.msCost()) ? Double.NEGATIVE_INFINITY : r.msCost() + prefillWeight * t.prefillMs(rest);
    }

    /** As {@link CostUnit#of} over the whole free pool: blocks as soon as one eligible free worker lacks timing. */
    private CostUnit unitOf(RoutingRequest request, FilterChain filters, Collection<WorkerRanking.Ranked> unpriced) {
        for (WorkerRanking.Ranked r : unpriced) {
            if (filters.admits(request, r.view()) && !isBusy(candidate(request, r, KvOverlap.NONE))) {
                return CostUnit.BLOCKS;
            }
        }
        return CostUnit.MILLISECONDS;
    }

    private Candidate candidate(RoutingRequest request, WorkerRanking.Ranked r, KvOverlap overlap) {
        return Candidate.of(request, r.view(), overlap, r.booked(), r.bookedAtReport(), merge);
    }

    private boolean isBusy(Candidate c) {
        return busy.enabled() && busy.isBusy(c);
    }
}
