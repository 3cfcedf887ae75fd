package io.flotilla.router.core;

import io.flotilla.router.wire.ProtoMapping;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static io.flotilla.router.core.WorkerView.Role.DECODE;
import static io.flotilla.router.core.WorkerView.Role.PREFILL;
import static io.flotilla.router.core.Fixtures.BS;
import static io.flotilla.router.core.Fixtures.MODEL;
import static io.flotilla.router.core.Fixtures.load;
import static io.flotilla.router.core.Fixtures.snapshot;
import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

/** Prefill/decode pairing; threshold 1024 uncached tokens (the default). */
class PairingTest {

    private static final RoutingPolicy POLICY = new RoutingPolicy(
            RouterDefaults.config().withBusy(new RouterConfig.Busy(RouterConfig.Threshold.absolute(10_000),
                    RouterConfig.Threshold.DISABLED, 1000, 100, 30_000)), new Random(1));

    private static RoutingRequest request(int isl, boolean allowDisagg) {
        return new RoutingRequest("r", MODEL, isl, BS, Fixtures.chain(9, isl / BS), Set.of(), allowDisagg, 0);
    }

    private static final List<WorkerView> PD = List.of(
            worker("p1", PREFILL), worker("p2", PREFILL).withLoad(load(0, 3000, 0)),
            worker("d1", DECODE).withLoad(load(0, 0, 300)), worker("d2", DECODE),
            worker("agg"));

    @Test
    void aLongUncachedPromptGetsAPrefillWorkerByPrefillCostAndADecodeWorkerByDecodeLoad() {
        Decision d = POLICY.decide(request(4096, true), snapshot(PD, Map.of("p2", 64)));
        assertThat(d.disaggregated()).isTrue();
        assertThat(d.prefillWorkerId()).isEqualTo("p1");  // p2's 1024 cached tokens do not pay for its 3000-token queue
        assertThat(d.prefillEndpoint()).isEqualTo("p1:7100");
        assertThat(d.workerId()).isEqualTo("d2");         // less KV in use than d1
        assertThat(d.newPrefillTokens()).isEqualTo(4096);
        assertThat(d.prefillTarget()).isEqualTo("p1");
        assertThat(d.scores()).containsKeys("d1", "d2", "prefill:p1", "prefill:p2").doesNotContainKey("agg");
        assertThat(ProtoMapping.decision(d).getPrefillWorkerId()).isEqualTo("p1");
    }

    @Test
    void overlapInThePrefillPoolCountsTowardTheThreshold() {
        // p1 holds 200 of 256 blocks: 4096 − 3200 = 896 uncached ≤ 1024 → no separate prefill
        Decision d = POLICY.decide(request(4096, true), snapshot(PD, Map.of("p1", 200)));
        assertThat(d.disaggregated()).isFalse();
        assertThat(d.workerId()).isIn("d1", "d2");
        // 100 blocks on p1: 4096 − 1600 = 2496 uncached > 1024 → paired, with p1's overlap reported
        Decision paired = POLICY.decide(request(4096, true), snapshot(PD, Map.of("p1", 100)));
        assertThat(paired.prefillWorkerId()).isEqualTo("p1");
        assertThat(paired.prefillOverlapBlocks()).isEqualTo(100);
        assertThat(paired.newPrefillTokens()).isEqualTo(4096 - 1600);
    }

    @Test
    void shortPromptsDisallowedRequestsAndAnOverloadedPrefillPoolRunAggregatedOnTheDecodePool() {
        Decision shortPrompt = POLICY.decide(request(512, true), snapshot(PD, Map.of()));
        assertThat(shortPrompt.disaggregated()).isFalse();
        assertThat(shortPrompt.workerId()).isEqualTo("d2");
        assertThat(shortPrompt.newPrefillTokens()).isEqualTo(512);

        Decision notAllowed = POLICY.decide(request(4096, false), snapshot(PD, Map.of()));
        assertThat(notAllowed.disaggregated()).isFalse();
        assertThat(notAllowed.workerId()).isIn("d1", "d2");

        List<WorkerView> overloaded = List.of(
                worker("p1", PREFILL).withLoad(load(0, 20_000, 0)),
                worker("p2", PREFILL).withLoad(load(0, 20_000, 0)),
                worker("d1", DECODE));
        Decision fallback = POLICY.decide(request(4096, true), snapshot(overloaded, Map.of()));
        assertThat(fallback.routed()).isTrue();
        assertThat(fallback.disaggregated()).isFalse();
        assertThat(fallback.workerId()).isEqualTo("d1");
    }

    @Test
    void aggregatedWorkersAreDecodeTargetsOnlyWhenNoDecodePoolExists() {
        List<WorkerView> noDecode = List.of(worker("p1", PREFILL), worker("agg1"), worker("agg2"));
        Decision d = POLICY.decide(request(4096, true), snapshot(noDecode, Map.of()));
        assertThat(d.prefillWorkerId()).isEqualTo("p1");
        assertThat(d.workerId()).isIn("agg1", "agg2");

        Decision withDecodePool = POLICY.decide(request(512, true), snapshot(PD, Map.of("agg", 32)));
        assertThat(withDecodePool.workerId()).isNotEqualTo("agg");
    }

    @Test
    void onlyPrefillWorkersLeftMeansNoWorker() {
        List<WorkerView> onlyPrefill = List.of(worker("p1", WorkerView.Role.PREFILL));
        assertThat(POLICY.decide(request(4096, true), snapshot(onlyPrefill, Map.of())).outcome())
                .isEqualTo(Decision.Outcome.NO_WORKER);
    }
}
