package io.flotilla.planner.plan;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

class GpuBudgetTest {

    private static final Map<Pool, PlannerConfig.Limits> LIMITS = Map.of(
            Pool.PREFILL, new PlannerConfig.Limits(0, 10, 2),
            Pool.DECODE, new PlannerConfig.Limits(1, 10, 1));

    @Test
    void withinBudgetNothingChanges() {
        PoolCounts wanted = PoolCounts.of(Pool.PREFILL, 2, Pool.DECODE, 4);
        assertThat(GpuBudget.fit(wanted, LIMITS, 8)).isEqualTo(wanted);
    }

    @Test
    void overBudgetTheGpusGoWhereTheGapIsLargest() {
        PoolCounts fitted = GpuBudget.fit(PoolCounts.of(Pool.PREFILL, 4, Pool.DECODE, 4), LIMITS, 8); // wants 12 GPUs
        assertThat(GpuBudget.gpus(fitted, LIMITS)).isLessThanOrEqualTo(8);
        // mins (0, 1), then by gap: prefill, prefill (tie, pool order), decode, prefill (tie): 3·2 + 2 = 8 GPUs
        assertThat(fitted).isEqualTo(PoolCounts.of(Pool.PREFILL, 3, Pool.DECODE, 2));
    }

    @Test
    void minimumsAreKeptEvenOverBudget() {
        assertThat(GpuBudget.fit(PoolCounts.of(Pool.PREFILL, 3, Pool.DECODE, 3), LIMITS, 0))
                .isEqualTo(PoolCounts.of(Pool.PREFILL, 0, Pool.DECODE, 1));
    }
}
