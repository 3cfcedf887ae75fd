package io.flotilla.router.core;

import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.protocol.v1.RouteDecision;
import io.flotilla.protocol.v1.RoutingMode;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static io.flotilla.router.core.Fixtures.BS;
import static io.flotilla.router.core.Fixtures.MODEL;
import static io.flotilla.router.core.Fixtures.load;
import static io.flotilla.router.core.Fixtures.snapshot;
import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

class RoutingPolicyTest {

    private static RoutingPolicy policy(RouterConfig config) {
        return new RoutingPolicy(config, new Random(1));
    }

    private static final RoutingPolicy KV = policy(RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER));

    @Test
    void prefersTheWorkerHoldingThePrefixWhenLoadIsEven() {
        RoutingRequest r = Fixtures.request("r", 2048);
        Decision d = KV.decide(r, snapshot(List.of(worker("a"), worker("b"), worker("c")), Map.of("b", 100, "c", 20)));
        assertThat(d.routed()).isTrue();
        assertThat(d.workerId()).isEqualTo("b");
        assertThat(d.overlapBlocks()).isEqualTo(100);
        assertThat(d.newPrefillTokens()).isEqualTo(2048 - 100 * BS);
        assertThat(d.modeUsed()).isEqualTo(ModeUsed.KV);
        assertThat(d.unit()).isEqualTo(CostUnit.MILLISECONDS);
        assertThat(d.scores()).containsOnlyKeys("a", "b", "c");
        assertThat(d.scores().get("b")).isLessThan(d.scores().get("c")).isLessThan(d.scores().get("a"));
    }

    @Test
    void leavesTheCacheOwnerOnceItsQueueCostsMoreThanRecomputing() {
        RoutingRequest r = Fixtures.request("r", 2048);
        // recompute on an idle worker: prefill(2048) = 1e-4·2048² + 204.8 + 10 ≈ 634 ms
        WorkerView owner = worker("a").withLoad(load(0, 1000, 0)); // prefill(1000) = 210 ms queued, cached prompt
        Decision stay = KV.decide(r, snapshot(List.of(owner, worker("b")), Map.of("a", 128)));
        assertThat(stay.workerId()).isEqualTo("a");
        WorkerView hot = worker("a").withLoad(load(0, 3000, 0)); // prefill(3000) = 1210 ms queued
        Decision spread = KV.decide(r, snapshot(List.of(hot, worker("b")), Map.of("a", 128)));
        assertThat(spread.workerId()).isEqualTo("b");
    }

    @Test
    void filtersWorkersThatMustNeverBeChosenWhateverTheirOverlap() {
        RoutingRequest r = new RoutingRequest("r", MODEL, 2048, BS, Fixtures.chain(1, 128), Set.of("excluded"), false, 0);
        List<WorkerView> workers = new ArrayList<>(List.of(
                Fixtures.withBlockSize(worker("bs32"), 32),
                Fixtures.withModel(worker("other-model"), "other"),
                worker("excluded"),
                worker("suspect").withRoutable(false),
                worker("draining").withState(WorkerView.State.DRAINING),
                worker("starting").withState(WorkerView.State.STARTING),
                worker("ok").withLoad(load(5, 50_000, 900))));
        Map<String, Integer> overlaps = Map.of("bs32", 128, "other-model", 128, "excluded", 128, "suspect", 128,
                "draining", 128, "starting", 128);
        Decision d = KV.decide(r, snapshot(workers, overlaps));
        assertThat(d.workerId()).isEqualTo("ok");
        assertThat(d.scores()).containsOnlyKeys("ok");

        workers.remove(workers.size() - 1);
        Decision none = KV.decide(r, snapshot(workers, overlaps));
        assertThat(none.outcome()).isEqualTo(Decision.Outcome.NO_WORKER);
        assertThat(none.workerId()).isEmpty();
    }

    @Test
    void degradesToTheApproximateIndexAndThenToLoadWithoutFailing() {
        RoutingRequest r = Fixtures.request("r", 2048);
        List<WorkerView> workers = List.of(worker("a"), worker("b").withLoad(load(0, 100, 0)));
        Decision approx = KV.decide(r, new ClusterSnapshot(workers, Map.of("b", 128), OverlapSource.APPROX, Map.of()));
        assertThat(approx.modeUsed()).isEqualTo(ModeUsed.KV_APPROX);
        assertThat(approx.workerId()).isEqualTo("b");

        Decision none = KV.decide(r, ClusterSnapshot.withoutOverlap(workers, Map.of()));
        assertThat(none.modeUsed()).isEqualTo(ModeUsed.LOAD);
        assertThat(none.workerId()).isEqualTo("a"); // no cache credit: the idle worker
        assertThat(none.overlapBlocks()).isZero();
        assertThat(none.newPrefillTokens()).isEqualTo(2048);
    }

    @Test
    void loadModeIgnoresOverlapAndBaselinesIgnoreCosts() {
        RoutingRequest r = Fixtures.request("r", 2048);
        List<WorkerView> workers = List.of(worker("a"), worker("b").withLoad(load(0, 100, 0)), worker("c"));
        RouterConfig base = RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER);
        Decision load = policy(base.withStrategy(Strategy.LOAD)).decide(r, snapshot(workers, Map.of("b", 128)));
        assertThat(load.modeUsed()).isEqualTo(ModeUsed.LOAD);
        assertThat(load.workerId()).isEqualTo("a");

        RoutingPolicy rr = policy(base.withStrategy(Strategy.ROUND_ROBIN));
        List<String> order = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Decision d = rr.decide(r, snapshot(workers, Map.of()));
            assertThat(d.modeUsed()).isEqualTo(ModeUsed.ROUND_ROBIN);
            assertThat(d.scores()).isEmpty();
            order.add(d.workerId());
        }
        assertThat(order).containsExactly("a", "b", "c", "a");
        Decision random = policy(base.withStrategy(Strategy.RANDOM)).decide(r, snapshot(workers, Map.of()));
        assertThat(random.modeUsed()).isEqualTo(ModeUsed.RANDOM);
        assertThat(random.workerId()).isIn("a", "b", "c");
    }

    @Test
    void pricesInBlocksWhenAnyCandidateLacksTiming() {
        RoutingRequest r = Fixtures.request("r", 2048);
        Decision d = KV.decide(r, snapshot(List.of(worker("a"), Fixtures.untimed("b")), Map.of("a", 64)));
        assertThat(d.unit()).isEqualTo(CostUnit.BLOCKS);
        // a: (0 + (2048 − 1024)) / 16 = 64 blocks; b: 2048 / 16 = 128 blocks; decode and queue terms 0
        assertThat(d.scores()).containsEntry("a", 64.0).containsEntry("b", 128.0);
        assertThat(d.workerId()).isEqualTo("a");
    }

    @Test
    void busyWorkersAreSkippedAndAllBusyAnswersWithARetryHint() {
        RouterConfig.Busy busy = new RouterConfig.Busy(RouterConfig.Threshold.absolute(1000),
                RouterConfig.Threshold.fraction(0.9), 1000, 100, 30_000);
        RoutingPolicy p = policy(RouterDefaults.config().withBusy(busy));
        RoutingRequest r = Fixtures.request("r", 256);
        WorkerView a = worker("a").withLoad(load(0, 5000, 0));  // prefill-busy, holds the prefix
        WorkerView b = worker("b").withLoad(load(0, 500, 0));
        assertThat(p.decide(r, snapshot(List.of(a, b), Map.of("a", 16))).workerId()).isEqualTo("b");

        WorkerView b2 = worker("b").withLoad(load(0, 2000, 0));  // excess 1000 → prefill(1000) = 210 ms
        Decision all = p.decide(r, snapshot(List.of(a, b2), Map.of("a", 16)));
        assertThat(all.outcome()).isEqualTo(Decision.Outcome.BUSY);
        assertThat(all.retryAfterMs()).isEqualTo(210);
        assertThat(ProtoMapping.decision(all).getBusy()).isTrue();

        WorkerView c = worker("c").withLoad(load(0, 0, 950)); // decode-busy: no drain estimate
        Decision decodeBusy = p.decide(r, snapshot(List.of(c), Map.of()));
        assertThat(decodeBusy.outcome()).isEqualTo(Decision.Outcome.BUSY);
        assertThat(decodeBusy.retryAfterMs()).isEqualTo(1000);
    }

    @Test
    void bookedLoadCountsLikeReportedLoad() {
        RoutingRequest r = Fixtures.request("r", 256);
        List<WorkerView> workers = List.of(worker("a"), worker("b"));
        ClusterSnapshot s = new ClusterSnapshot(workers, Map.of(), OverlapSource.INDEXER,
                Map.of("a", new ActiveLoad(4000, 2, 0, 0)));
        assertThat(KV.decide(r, s).workerId()).isEqualTo("b");
    }

    @Test
    void decidingHasNoSideEffectsAndIgnoresWorkerOrder() {
        RoutingRequest r = Fixtures.request("r", 1024);
        List<WorkerView> workers = List.of(worker("c"), worker("a"), worker("b"));
        ClusterSnapshot s = snapshot(workers, Map.of());
        Decision first = KV.decide(r, s);
        Decision again = KV.decide(r, s);
        Decision reordered = KV.decide(r, snapshot(List.of(worker("b"), worker("c"), worker("a")), Map.of()));
        assertThat(again).isEqualTo(first);
        assertThat(reordered).isEqualTo(first);
        assertThat(first.workerId()).isEqualTo("a"); // all equal: smallest id
    }

    @Test
    void requiresOnlyWhatItsScorersRead() {
        assertThat(KV.requires()).containsExactlyInAnyOrder(Signal.KV_OVERLAP, Signal.LOAD, Signal.TIMING);
        RouterConfig base = RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER);
        assertThat(policy(base.withStrategy(Strategy.LOAD)).requires()).containsExactlyInAnyOrder(Signal.LOAD, Signal.TIMING);
        assertThat(policy(base.withStrategy(Strategy.ROUND_ROBIN)).requires()).isEmpty();
        assertThat(policy(RouterDefaults.config().withStrategy(Strategy.RANDOM)).requires()).containsExactly(Signal.LOAD);
    }

    @Test
    void wireFormCarriesTheModeUsed() {
        RoutingRequest r = Fixtures.request("r", 1024);
        Decision d = KV.decide(r, new ClusterSnapshot(List.of(worker("a")), Map.of("a", 8), OverlapSource.APPROX, Map.of()));
        RouteDecision wire = ProtoMapping.decision(d);
        assertThat(wire.getWorkerId()).isEqualTo("a");
        assertThat(wire.getWorkerEndpoint()).isEqualTo("a:7100");
        assertThat(wire.getOverlapBlocks()).isEqualTo(8);
        assertThat(wire.getModeUsed()).isEqualTo(RoutingMode.ROUTING_MODE_KV_APPROX);
        assertThat(wire.getBusy()).isFalse();
        assertThat(d.modeUsed().metricTag()).isEqualTo("kv_approx");
    }
}
