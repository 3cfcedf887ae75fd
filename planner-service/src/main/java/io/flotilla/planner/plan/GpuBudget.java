package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;

import java.util.Map;

/**
 * Fits replica counts into a GPU budget (Σ replicas·gpus_per_replica ≤ budget). Within budget the
 * counts are kept. Over it: every pool starts at its minimum, then the remaining GPUs go one replica
 * at a time to the pool furthest from what it wanted ((wanted − given) / wanted, ties in pool order)
 * while the replica fits. Minimums are kept even when they alone exceed the budget. Pure.
 */
public final class GpuBudget {

    private GpuBudget() {
    }

    public static PoolCounts fit(PoolCounts wanted, Map<Pool, PlannerConfig.Limits> limits, int budget) {
        if (gpus(wanted, limits) <= budget) {
            return wanted;
        }
        PoolCounts given = PoolCounts.NONE;
        for (Pool p : wanted.pools()) {
            given = given.with(p, Math.min(wanted.get(p), limits.get(p).min()));
        }
        while (true) {
            Pool best = null;
            double bestGap = 0;
            for (Pool p : wanted.pools()) {
                int want = wanted.get(p);
                int have = given.get(p);
                if (have >= want || gpus(given, limits) + limits.get(p).gpusPerReplica() > budget) {
                    continue;
                }
                double gap = (double) (want - have) / want;
                if (best == null || gap > bestGap) {
                    best = p;
                    bestGap = gap;
                }
            }
            if (best == null) {
                return given;
            }
            given = given.with(best, given.get(best) + 1);
        }
    }

    public static int gpus(PoolCounts counts, Map<Pool, PlannerConfig.Limits> limits) {
        int total = 0;
        for (Pool p : counts.pools()) {
            total += counts.get(p) * limits.get(p).gpusPerReplica();
        }
        return total;
    }
}
