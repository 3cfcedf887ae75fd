package io.flotilla.router.service;

import io.flotilla.router.core.LoadReport;
import io.flotilla.router.core.RoutingRequest;
import io.flotilla.router.core.WorkerTiming;
import io.flotilla.router.core.WorkerView;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;

/** What a FindMatches answer may save: the prompt's prefill on the fastest worker that could serve it. */
class PrefillAtStakeTest {

    /** 0.01 ms a token, no fixed cost: 10,000 tokens in 100 ms. */
    private static final WorkerTiming LINEAR = new WorkerTiming(0, 0.01, 0, 0, 0, 5, 1);

    private static WorkerView worker(String id, String model, int blockSize, WorkerView.State state, boolean routable,
                                     Optional<WorkerTiming> timing) {
        return new WorkerView(id, WorkerView.Role.AGGREGATED, model, blockSize, "", id + ":7100", state, routable,
                timing, 1000, LoadReport.NONE);
    }

    private static RoutingRequest prompt(int tokens) {
        return new RoutingRequest("r", "m", tokens, 16, new long[tokens / 16], null, false, 0);
    }

    @Test
    void theFastestWorkerThatCouldServeThePromptSetsTheStake() {
        WorkerTiming twiceAsFast = new WorkerTiming(0, 0.005, 0, 0, 0, 5, 1);
        List<WorkerView> workers = List.of(
                worker("slow", "m", 16, WorkerView.State.READY, true, Optional.of(LINEAR)),
                worker("fast", "m", 16, WorkerView.State.READY, true, Optional.of(twiceAsFast)),
                worker("other-model", "n", 16, WorkerView.State.READY, true, Optional.of(new WorkerTiming(0, 0.0001, 0, 0, 0, 5, 1))),
                worker("other-blocks", "m", 32, WorkerView.State.READY, true, Optional.of(new WorkerTiming(0, 0.0001, 0, 0, 0, 5, 1))),
                worker("draining", "m", 16, WorkerView.State.DRAINING, true, Optional.of(new WorkerTiming(0, 0.0001, 0, 0, 0, 5, 1))),
                worker("suspect", "m", 16, WorkerView.State.READY, false, Optional.of(new WorkerTiming(0, 0.0001, 0, 0, 0, 5, 1))));

        assertThat(RequestRouter.prefillAtStakeNanos(prompt(10_000), workers)).isEqualTo(50_000_000L);
    }

    @Test
    void noAdvertisedTimingMeansNoStake() {
        List<WorkerView> workers = List.of(worker("w", "m", 16, WorkerView.State.READY, true, Optional.empty()));

        assertThat(RequestRouter.prefillAtStakeNanos(prompt(10_000), workers)).isZero();
        assertThat(RequestRouter.prefillAtStakeNanos(prompt(10_000), List.of())).isZero();
    }
}
