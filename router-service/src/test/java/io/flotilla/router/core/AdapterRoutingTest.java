package io.flotilla.router.core;

import io.flotilla.router.wire.ProtoMapping;
import io.flotilla.protocol.v1.AdapterSlots;
import io.flotilla.protocol.v1.TenantIsolation;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import static io.flotilla.router.core.Fixtures.BS;
import static io.flotilla.router.core.Fixtures.MODEL;
import static io.flotilla.router.core.Fixtures.SIMPLE;
import static io.flotilla.router.core.Fixtures.load;
import static io.flotilla.router.core.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;

/** LoRA adapter affinity and tenant isolation in the filters and the cost (AdapterLoadScorer, LoraFilter, TenancyFilter). */
class AdapterRoutingTest {

    private static final RoutingPolicy KV = new RoutingPolicy(RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER),
            new Random(1));

    private static WorkerView worker(String id, Set<String> loaded, Set<String> available, double loadMs,
                                     WorkerView.Isolation isolation) {
        return new WorkerView(id, WorkerView.Role.AGGREGATED, MODEL, BS, "bf16/bs16/paged", id + ":7100",
                WorkerView.State.READY, true, Optional.of(SIMPLE), 1000, LoadReport.NONE, KvTierLinks.NONE,
                new WorkerAdapters(loaded, available, loadMs), isolation);
    }

    private static WorkerView adapters(String id, Set<String> loaded, Set<String> available, double loadMs) {
        return worker(id, loaded, available, loadMs, WorkerView.Isolation.SALT_AFTER_PUBLIC_PREFIX);
    }

    private static RoutingRequest onAdapter(String lora, int isl) {
        return new RoutingRequest("r", MODEL, isl, BS, Fixtures.chain(7, isl / BS), Set.of(), false, 0, lora, false);
    }

    @Test
    void onlyWorkersThatCanServeTheAdapterAreCandidates() {
        List<WorkerView> workers = List.of(adapters("base-only", Set.of(), Set.of(), 0),
                adapters("other-adapter", Set.of("chat"), Set.of("chat"), 100),
                adapters("loadable", Set.of(), Set.of("sql"), 100));
        Decision d = KV.decide(onAdapter("sql", 256), snapshot(workers, Map.of()));
        assertThat(d.workerId()).isEqualTo("loadable");
        assertThat(d.scores()).containsOnlyKeys("loadable");
        Decision none = KV.decide(onAdapter("unknown", 256), snapshot(workers, Map.of()));
        assertThat(none.outcome()).isEqualTo(Decision.Outcome.NO_WORKER);
        // the base model runs anywhere
        assertThat(KV.decide(onAdapter("", 256), snapshot(workers, Map.of())).scores()).hasSize(3);
    }

    @Test
    void theWorkerWithTheAdapterLoadedWinsUntilItsQueueCostsMoreThanTheLoad() {
        // prefill(256) = 1e-4·256² + 25.6 + 10 ≈ 42 ms everywhere; the load adds 500 ms on the cold worker
        WorkerView warm = adapters("warm", Set.of("sql"), Set.of("sql"), 500);
        WorkerView cold = adapters("cold", Set.of(), Set.of("sql"), 500);
        Decision d = KV.decide(onAdapter("sql", 256), snapshot(List.of(cold, warm), Map.of()));
        assertThat(d.workerId()).isEqualTo("warm");
        assertThat(d.scores().get("cold") - d.scores().get("warm")).isCloseTo(500, org.assertj.core.data.Offset.offset(1e-9));
        // 3000 queued prefill tokens on the warm worker: 1210 ms of queue > 500 ms of load
        Decision spread = KV.decide(onAdapter("sql", 256), snapshot(List.of(cold, warm.withLoad(load(0, 3000, 0))), Map.of()));
        assertThat(spread.workerId()).isEqualTo("cold");
    }

    @Test
    void aLoadWithoutTimingIsPricedLikeAColdPrefillOfThePrompt() {
        WorkerView warm = new WorkerView("warm", WorkerView.Role.AGGREGATED, MODEL, BS, "", "w:1",
                WorkerView.State.READY, true, Optional.empty(), 1000, LoadReport.NONE, KvTierLinks.NONE,
                new WorkerAdapters(Set.of("sql"), Set.of("sql"), 0), WorkerView.Isolation.NONE);
        WorkerView cold = new WorkerView("cold", WorkerView.Role.AGGREGATED, MODEL, BS, "", "c:1",
                WorkerView.State.READY, true, Optional.empty(), 1000, LoadReport.NONE, KvTierLinks.NONE,
                new WorkerAdapters(Set.of(), Set.of("sql"), 0), WorkerView.Isolation.NONE);
        Decision d = KV.decide(onAdapter("sql", 256), snapshot(List.of(cold, warm), Map.of()));
        assertThat(d.unit()).isEqualTo(CostUnit.BLOCKS);
        assertThat(d.workerId()).isEqualTo("warm");
        assertThat(d.scores().get("cold") - d.scores().get("warm")).isEqualTo(256.0 / BS);
    }

    @Test
    void aTenantSaltedRequestNeverLandsOnAWorkerThatCannotIsolateTenants() {
        WorkerView shared = worker("shared", Set.of(), Set.of(), 0, WorkerView.Isolation.NONE);
        WorkerView vllm = worker("vllm", Set.of(), Set.of(), 0, WorkerView.Isolation.SALT_ALL_BLOCKS);
        RoutingRequest salted = new RoutingRequest("r", MODEL, 256, BS, Fixtures.chain(7, 16), Set.of(), false, 0, "", true);
        // even with the whole prompt cached on the non-isolating worker
        Decision d = KV.decide(salted, snapshot(List.of(shared, vllm), Map.of("shared", 16)));
        assertThat(d.workerId()).isEqualTo("vllm");
        assertThat(d.scores()).containsOnlyKeys("vllm");
        assertThat(KV.decide(salted, snapshot(List.of(shared), Map.of())).outcome()).isEqualTo(Decision.Outcome.NO_WORKER);
    }

    @Test
    void theViewReadsAdaptersAndIsolationFromTheWorkersStatus() {
        WorkerStatus status = WorkerStatus.newBuilder().setWorkerId("w").setModel(MODEL).setBlockSize(BS)
                .setState(WorkerState.WORKER_STATE_READY)
                .setAdapters(AdapterSlots.newBuilder().addLoaded("sql").addAvailable("sql").addAvailable("chat")
                        .setMaxLoaded(2).setLoadMs(120))
                .setTenantIsolation(TenantIsolation.TENANT_ISOLATION_SALT_ALL_BLOCKS).build();
        WorkerView v = ProtoMapping.workerView(status, null, true);
        assertThat(v.adapters().loaded()).containsExactly("sql");
        assertThat(v.adapters().available()).containsExactlyInAnyOrder("sql", "chat");
        assertThat(v.adapters().loadMs()).isEqualTo(120);
        assertThat(v.isolatesTenants()).isTrue();
        assertThat(v.withLoad(load(1, 2, 3)).adapters()).isEqualTo(v.adapters());
        WorkerView bare = ProtoMapping.workerView(WorkerStatus.newBuilder().setWorkerId("b").setModel(MODEL).setBlockSize(BS).build(),
                null, true);
        assertThat(bare.adapters()).isEqualTo(WorkerAdapters.NONE);
        assertThat(bare.isolatesTenants()).isFalse();
    }
}
