package io.flotilla.router.core;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Named invariants of the policy over random clusters. Each try builds its cluster from one seeded
 * {@link Random}, so a failure reproduces from jqwik's reported seed.
 */
class RoutingInvariantsPropertyTest {

    private static final WorkerView.Role[] ROLES = {WorkerView.Role.AGGREGATED, WorkerView.Role.PREFILL,
            WorkerView.Role.DECODE, WorkerView.Role.UNSPECIFIED};
    private static final WorkerView.State[] STATES = {WorkerView.State.READY, WorkerView.State.READY,
            WorkerView.State.READY, WorkerView.State.STARTING, WorkerView.State.DRAINING,
            WorkerView.State.UNHEALTHY, WorkerView.State.STOPPED};

    private record Scenario(RoutingRequest request, ClusterSnapshot snapshot, RouterConfig config) {
    }

    private static Scenario scenario(long seed) {
        Random rnd = new Random(seed);
        int n = 1 + rnd.nextInt(12);
        List<WorkerView> workers = new ArrayList<>();
        Map<String, Integer> overlaps = new HashMap<>();
        Map<String, ActiveLoad> booked = new HashMap<>();
        for (int i = 0; i < n; i++) {
            String id = "w" + i;
            Optional<WorkerTiming> timing = rnd.nextInt(5) == 0 ? Optional.empty() : Optional.of(Fixtures.MOCKER);
            workers.add(new WorkerView(id, ROLES[rnd.nextInt(ROLES.length)], rnd.nextInt(6) == 0 ? "other" : Fixtures.MODEL,
                    rnd.nextInt(6) == 0 ? 32 : 16, "", id + ":1", STATES[rnd.nextInt(STATES.length)], rnd.nextInt(8) != 0,
                    timing, rnd.nextInt(10) == 0 ? 0 : 1000 + rnd.nextInt(20_000),
                    new LoadReport(rnd.nextInt(50), rnd.nextInt(20), rnd.nextInt(50_000), rnd.nextInt(20_000))));
            if (rnd.nextBoolean()) {
                overlaps.put(id, rnd.nextInt(300));
            }
            if (rnd.nextBoolean()) {
                booked.put(id, new ActiveLoad(rnd.nextInt(30_000), rnd.nextInt(10), rnd.nextInt(10_000), rnd.nextInt(40)));
            }
        }
        Set<String> exclude = new HashSet<>();
        for (int i = 0; i < n; i++) {
            if (rnd.nextInt(6) == 0) {
                exclude.add("w" + i);
            }
        }
        int blocks = rnd.nextInt(300);
        RoutingRequest r = new RoutingRequest("r", Fixtures.MODEL, blocks * 16 + rnd.nextInt(16), 16,
                Fixtures.chain(seed, blocks), exclude, rnd.nextBoolean(), rnd.nextInt(2000));
        OverlapSource source = OverlapSource.values()[rnd.nextInt(3)];
        RouterConfig.Busy busy = rnd.nextBoolean() ? RouterDefaults.config().busy()
                : new RouterConfig.Busy(RouterConfig.Threshold.absolute(rnd.nextInt(40_000)),
                RouterConfig.Threshold.fraction(rnd.nextDouble()), 1000, 100, 30_000);
        RouterConfig config = RouterDefaults.config()
                .withStrategy(Strategy.values()[rnd.nextInt(Strategy.values().length)])
                .withLoadMerge(LoadMerge.values()[rnd.nextInt(LoadMerge.values().length)])
                .withBusy(busy)
                .withDisagg(new RouterConfig.Disagg(rnd.nextInt(4096)));
        return new Scenario(r, new ClusterSnapshot(workers, overlaps, source, booked), config);
    }

    /** The filter rules restated independently of {@link FilterChain}, so a broken filter fails here. */
    private static boolean allowed(RoutingRequest r, WorkerView w) {
        return w.state() == WorkerView.State.READY && w.routable() && w.model().equals(r.model())
                && w.blockSize() == r.blockSize() && !r.exclude().contains(w.id());
    }

    @Property(seed = "20250101", tries = 1000)
    void aDecisionNamesOnlyEligibleWorkersInTheRightRoles(@ForAll long seed) {
        Scenario s = scenario(seed);
        Decision d = new RoutingPolicy(s.config(), new Random(seed)).decide(s.request(), s.snapshot());
        Map<String, WorkerView> byId = new HashMap<>();
        s.snapshot().workers().forEach(w -> byId.put(w.id(), w));
        boolean anyGenerator = s.snapshot().workers().stream()
                .anyMatch(w -> allowed(s.request(), w) && w.role() != WorkerView.Role.PREFILL);
        switch (d.outcome()) {
            case ROUTED -> {
                WorkerView w = byId.get(d.workerId());
                assertThat(allowed(s.request(), w)).isTrue();
                assertThat(w.role()).isNotEqualTo(WorkerView.Role.PREFILL);
                if (d.disaggregated()) {
                    WorkerView p = byId.get(d.prefillWorkerId());
                    assertThat(allowed(s.request(), p)).isTrue();
                    assertThat(p.role()).isEqualTo(WorkerView.Role.PREFILL);
                    assertThat(s.request().allowDisagg()).isTrue();
                    assertThat(d.newPrefillTokens()).isGreaterThan(s.config().disagg().minUncachedTokens());
                }
                assertThat(d.newPrefillTokens()).isBetween(0, s.request().islTokens());
                assertThat(d.newDecodeBlocks()).isBetween(0, s.request().bookedBlocks());
                assertThat(d.scores().values()).allSatisfy(v -> assertThat(v).isFinite().isNotNegative());
            }
            case NO_WORKER -> assertThat(anyGenerator).isFalse();
            case BUSY -> {
                assertThat(anyGenerator).isTrue();
                assertThat(d.retryAfterMs()).isBetween(100L, 30_000L);
            }
        }
        if (s.snapshot().source() == OverlapSource.NONE && s.config().strategy() == Strategy.KV) {
            assertThat(d.modeUsed()).isEqualTo(ModeUsed.LOAD);
        }
    }

    @Property(seed = "20250102", tries = 500)
    void greedyDecisionsDependOnNeitherWorkerOrderNorEarlierDecisions(@ForAll long seed) {
        Scenario s = scenario(seed);
        RouterConfig config = s.config().withStrategy(seed % 2 == 0 ? Strategy.KV : Strategy.LOAD).withTemperature(0);
        RoutingPolicy policy = new RoutingPolicy(config, new Random(seed));
        Decision first = policy.decide(s.request(), s.snapshot());
        List<WorkerView> shuffled = new ArrayList<>(s.snapshot().workers());
        Collections.shuffle(shuffled, new Random(seed + 1));
        ClusterSnapshot reordered = new ClusterSnapshot(shuffled, s.snapshot().overlapBlocks(), s.snapshot().source(),
                s.snapshot().activeLoad());
        assertThat(policy.decide(s.request(), reordered)).isEqualTo(first);
        assertThat(policy.decide(s.request(), s.snapshot())).isEqualTo(first);
    }
}
