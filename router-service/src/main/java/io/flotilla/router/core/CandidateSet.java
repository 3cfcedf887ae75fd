package io.flotilla.router.core;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
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
 * <p><b>Guarantee</b> (greedy picking, {@link Picker#argmin}). Let C be the set, K ⊆ C its least-loaded part,
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
 * {@code PrunedDecisionPropertyTest} checks both against the full scan over random fleets.
 */
final class CandidateSet {

    /** The pool to score, in id order, and its unit; or no pool and why the decision must scan. */
    record Collected(List<Candidate> pool, CostUnit unit, int walked, Scan.FullScan fullScan) {
        static Collected scan(Scan.FullScan why, int walked) {
            return new Collected(null, CostUnit.BLOCKS, walked, why);
        }
    }

    private static final Comparator<Candidate> BY_ID = Comparator.comparing(Candidate::id);

    private final int leastLoaded;
    private final BusyDetector busy;
    private final LoadMerge merge;

    CandidateSet(int leastLoaded, BusyDetector busy, LoadMerge merge) {
        this.leastLoaded = leastLoaded;
        this.busy = busy;
        this.merge = merge;
    }

    Collected collect(RoutingRequest request, ClusterSnapshot snapshot, boolean credit) {
        WorkerRanking ranking = snapshot.ranking();
        if (!ranking.ranks()) {
            return Collected.scan(Scan.FullScan.UNRANKED, 0);
        }
        if (ranking.disaggregated(request.model(), request.blockSize())) {
            return Collected.scan(Scan.FullScan.DISAGGREGATED, 0);
        }
        Map<String, Candidate> chosen = new HashMap<>(4 * (leastLoaded + snapshot.overlapBlocks().size()));
        if (credit) {
            addHolders(request, snapshot, snapshot.overlapBlocks().keySet(), chosen);
            addHolders(request, snapshot, snapshot.tiered().keySet(), chosen);
        }
        CostUnit unit = unitOf(request, ranking.unpriced(request.model(), request.blockSize()));
        Iterator<WorkerRanking.Ranked> ascending = ranking.ascending(request.model(), request.blockSize(), unit);
        int taken = 0;
        int walked = 0;
        while (taken < leastLoaded && ascending.hasNext()) {
            WorkerRanking.Ranked r = ascending.next();
            walked++;
            if (chosen.containsKey(r.id()) || !Eligibility.eligible(request, r.view())) {
                continue;
            }
            Candidate c = candidate(request, r, KvOverlap.NONE);
            if (!isBusy(c)) {
                chosen.put(r.id(), c);
                taken++;
            }
        }
        if (chosen.isEmpty()) {
            return Collected.scan(Scan.FullScan.NO_FREE_CANDIDATE, walked);
        }
        List<Candidate> pool = new ArrayList<>(chosen.values());
        pool.sort(BY_ID);
        return new Collected(pool, unit, walked, Scan.FullScan.NONE);
    }

    /** Holders are ranked when they are aggregated workers of the request's group; others are not candidates. */
    private void addHolders(RoutingRequest request, ClusterSnapshot snapshot, Collection<String> ids,
                            Map<String, Candidate> chosen) {
        for (String id : ids) {
            if (chosen.containsKey(id)) {
                continue;
            }
            WorkerRanking.Ranked r = snapshot.ranking().get(id);
            if (r == null || !Eligibility.eligible(request, r.view())) {
                continue;
            }
            Candidate c = candidate(request, r, snapshot.tieredOf(id));
            if (!isBusy(c)) {
                chosen.put(id, c);
            }
        }
    }

    /** As {@link CostUnit#of} over the whole free pool: blocks as soon as one eligible free worker lacks timing. */
    private CostUnit unitOf(RoutingRequest request, Collection<WorkerRanking.Ranked> unpriced) {
        for (WorkerRanking.Ranked r : unpriced) {
            if (Eligibility.eligible(request, r.view()) && !isBusy(candidate(request, r, KvOverlap.NONE))) {
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
