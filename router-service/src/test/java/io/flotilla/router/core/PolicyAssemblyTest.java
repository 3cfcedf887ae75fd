package io.flotilla.router.core;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import static io.flotilla.router.core.Fixtures.BS;
import static io.flotilla.router.core.Fixtures.MODEL;
import static io.flotilla.router.core.Fixtures.SIMPLE;
import static io.flotilla.router.core.Fixtures.snapshot;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A policy assembled from named plugins: sections per model over the standard formula, names checked at
 * assembly, and {@link LoraEvictionScorer} as the plugin added by one class and one configuration key.
 */
class PolicyAssemblyTest {

    private static final RouterConfig BASE = RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER);

    /** A worker serving adapters {@code a1..a3} and holding {@code maxLoaded} of them at once. */
    private static WorkerView lora(String id, Set<String> loaded, int maxLoaded) {
        return new WorkerView(id, WorkerView.Role.AGGREGATED, MODEL, BS, "", id + ":7100",
                WorkerView.State.READY, true, Optional.of(SIMPLE), 1000, LoadReport.NONE, KvTierLinks.NONE,
                new WorkerAdapters(loaded, Set.of("a1", "a2", "a3"), 400, maxLoaded),
                WorkerView.Isolation.SALT_AFTER_PUBLIC_PREFIX);
    }

    private static RoutingRequest onAdapter(String lora) {
        return new RoutingRequest("r", MODEL, 256, BS, Fixtures.chain(7, 16), Set.of(), false, 0, lora, false);
    }

    @ParameterizedTest(name = "{0} loaded of {1}, request {2}: {3} ms / {4} blocks")
    @CsvSource({
            // loaded, maxLoaded, adapter, ms, blocks   (256-token prompt, bs 16: 16 blocks)
            "a1;a2, 2, a3,  400, 16",   // full: loading a3 unloads one
            "a1,    2, a3,  0,   0",    // a free slot
            "a1;a2, 2, a1,  0,   0",    // loaded already
            "a1;a2, 2, '',  0,   0",    // the base model
            "a1;a2, 0, a3,  0,   0",    // the worker does not say how many it holds
    })
    void loraEvictionPricesTheLoadItForcesOnAnotherAdapter(String loaded, int maxLoaded, String adapter, double ms,
                                                           double blocks) {
        WorkerView w = lora("w", Set.of(loaded.split(";")), maxLoaded);
        RoutingRequest r = onAdapter(adapter);
        Candidate c = Candidate.of(r, w, 0, ActiveLoad.NONE, ActiveLoad.NONE, LoadMerge.DELTA);
        Scorer s = PluginRegistry.standard().scorer("lora-eviction");
        assertThat(s.cost(new Scorer.ScoringContext(r, CostUnit.MILLISECONDS), c)).isEqualTo(ms);
        assertThat(s.cost(new Scorer.ScoringContext(r, CostUnit.BLOCKS), c)).isEqualTo(blocks);
    }

    @Test
    void withLoraEvictionConfiguredALoadGoesToAFreeSlotInsteadOfUnloadingAnAdapter() {
        // both must load a3; "full" sorts first and ties otherwise, so without the scorer it is chosen
        List<WorkerView> workers = List.of(lora("full", Set.of("a1", "a2"), 2), lora("spare", Set.of("a1"), 2));
        ClusterSnapshot s = snapshot(workers, Map.of());
        assertThat(new RoutingPolicy(BASE, new Random(1)).decide(onAdapter("a3"), s).workerId()).isEqualTo("full");
        RouterConfig evicting = BASE.withPolicies(Map.of(PolicySpec.DEFAULT,
                new PolicySpec.Section(List.of(), Map.of("lora-eviction", 1.0))));
        Decision d = new RoutingPolicy(evicting, new Random(1)).decide(onAdapter("a3"), s);
        assertThat(d.workerId()).isEqualTo("spare");
        assertThat(d.scores().get("full") - d.scores().get("spare")).isCloseTo(400.0, org.assertj.core.api.Assertions.within(1e-9));
        assertThat(d.scan().fullScan()).isEqualTo(Scan.FullScan.CUSTOM_POLICY);
    }

    @Test
    void aModelsSectionAppliesToThatModelOnlyOverTheDefaultSection() {
        Map<String, PolicySpec.Section> sections = Map.of(
                PolicySpec.DEFAULT, new PolicySpec.Section(List.of(), Map.of("queue", 3.0)),
                "sql", new PolicySpec.Section(List.of(), Map.of("decode-load", 0.0, "lora-eviction", 2.0)));
        RouterConfig.Weights w = new RouterConfig.Weights(1, 1, 1);
        assertThat(PolicySpec.forModel("chat", w, sections).scorers()).containsExactly(
                new PolicySpec.Term("prefill", 1), new PolicySpec.Term("lora-load", 1),
                new PolicySpec.Term("decode-load", 1), new PolicySpec.Term("queue", 3));
        assertThat(PolicySpec.forModel("sql", w, sections).scorers()).containsExactly(
                new PolicySpec.Term("prefill", 1), new PolicySpec.Term("lora-load", 1),
                new PolicySpec.Term("decode-load", 0), new PolicySpec.Term("queue", 3),
                new PolicySpec.Term("lora-eviction", 2));
    }

    @Test
    void anUnknownPluginIsRefusedByNameWhenThePolicyIsAssembled() {
        RouterConfig typo = BASE.withPolicies(Map.of("m", new PolicySpec.Section(List.of(), Map.of("qeue", 1.0))));
        assertThatThrownBy(() -> new RoutingPolicy(typo, new Random(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown routing scorer 'qeue'");
        RouterConfig filter = BASE.withPolicies(Map.of("m", new PolicySpec.Section(List.of("gpu-a100"), Map.of())));
        assertThatThrownBy(() -> new RoutingPolicy(filter, new Random(1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown routing filter 'gpu-a100'");
        assertThatThrownBy(() -> new PolicySpec.Term("queue", -1)).isInstanceOf(IllegalArgumentException.class);
        Map<String, Double> unset = new java.util.HashMap<>();
        unset.put("queue", null);
        assertThatThrownBy(() -> new PolicySpec.Section(List.of(), unset))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("scorer 'queue' has no weight");
    }

    @Test
    void aRegisteredFilterIsNamedInOneModelsSectionAndTheStandardFiltersStillApply() {
        PluginRegistry plugins = PluginRegistry.standard().withFilter("not-w1", () -> new Filter() {
            @Override
            public String name() {
                return "not-w1";
            }

            @Override
            public boolean admits(RoutingRequest request, WorkerView worker) {
                return !worker.id().equals("w1");
            }
        });
        RouterConfig c = BASE.withPolicies(Map.of(MODEL, new PolicySpec.Section(List.of("not-w1"), Map.of())));
        List<WorkerView> workers = List.of(Fixtures.worker("w1"), Fixtures.worker("w2"),
                Fixtures.withModel(Fixtures.worker("w3"), "other"));
        Decision d = new RoutingPolicy(c, plugins, new Random(1)).decide(Fixtures.request("r", 64), snapshot(workers, Map.of()));
        assertThat(d.scores()).containsOnlyKeys("w2");
    }
}
