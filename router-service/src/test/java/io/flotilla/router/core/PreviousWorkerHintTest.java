package io.flotilla.router.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Random;

import static io.flotilla.router.core.Fixtures.load;
import static io.flotilla.router.core.Fixtures.snapshot;
import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A follow-up turn's {@code previous_worker} hint is priced, not obeyed: the KV policy keeps the turn on the
 * hinted worker while the index reports its prefix there and its queue costs less than recomputing, and moves it
 * when the index has nothing there or the worker is too loaded; {@link PreviousWorkerHint#judge} names each case.
 */
class PreviousWorkerHintTest {

    private static final RoutingPolicy KV = new RoutingPolicy(RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER), new Random(1));

    private static Map<String, KvOverlap> overlaps(Map<String, Integer> blocks) {
        Map<String, KvOverlap> out = new java.util.HashMap<>();
        blocks.forEach((w, n) -> out.put(w, KvOverlap.deviceOnly(n)));
        return out;
    }

    @Test
    void keptWhereTheIndexStillHasTheConversation() {
        RoutingRequest r = Fixtures.request("turn-2", 2048);
        Map<String, Integer> index = Map.of("a", 120);
        Decision d = KV.decide(r, snapshot(List.of(worker("a"), worker("b")), index));
        assertThat(PreviousWorkerHint.judge("a", overlaps(index), d))
                .isEqualTo(new PreviousWorkerHint.Judged("resident", "kept"));
    }

    @Test
    void movedWhenTheIndexNoLongerHasItThere() {
        RoutingRequest r = Fixtures.request("turn-2", 2048);
        Map<String, Integer> index = Map.of("b", 120); // evicted from a, the prefix is on b now
        Decision d = KV.decide(r, snapshot(List.of(worker("a"), worker("b")), index));
        assertThat(d.workerId()).isEqualTo("b");
        assertThat(PreviousWorkerHint.judge("a", overlaps(index), d))
                .isEqualTo(new PreviousWorkerHint.Judged("gone", "moved"));
    }

    @Test
    void movedWhenItsWorkerIsTooLoadedEvenWithTheKv() {
        RoutingRequest r = Fixtures.request("turn-2", 2048);
        Map<String, Integer> index = Map.of("a", 128);
        WorkerView hot = worker("a").withLoad(load(0, 3000, 0));
        Decision d = KV.decide(r, snapshot(List.of(hot, worker("b")), index));
        assertThat(PreviousWorkerHint.judge("a", overlaps(index), d))
                .isEqualTo(new PreviousWorkerHint.Judged("resident", "moved"));
    }

    @Test
    void unknownWithoutAnIndexAnswerAndNothingWithoutAHint() {
        RoutingRequest r = Fixtures.request("turn-2", 2048);
        Decision d = KV.decide(r, snapshot(List.of(worker("a"), worker("b")), Map.of("a", 120)));
        assertThat(PreviousWorkerHint.judge("a", null, d)).isEqualTo(new PreviousWorkerHint.Judged("unknown", "kept"));
        assertThat(PreviousWorkerHint.judge("", overlaps(Map.of()), d)).isNull();
        assertThat(PreviousWorkerHint.judge(null, overlaps(Map.of()), d)).isNull();
    }
}
