package io.flotilla.router.core;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

import static io.flotilla.router.core.Fixtures.load;
import static io.flotilla.router.core.Fixtures.request;
import static io.flotilla.router.core.Fixtures.snapshot;
import static io.flotilla.router.core.Fixtures.withModel;
import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link RoutingPolicy#capacity}: saturation and headroom per model, by the same rule a decision
 * uses — checked against {@link RoutingPolicy#decide} itself, so the two can never disagree.
 */
class CapacityTest {

    /** Decode-busy above 950 of 1000 blocks; prefill-busy above 16,000 queued tokens (1000 blocks · 16). */
    private static final RoutingPolicy POLICY = new RoutingPolicy(RouterDefaults.config(), new SplittableRandom(1));

    @Test
    void aModelIsSaturatedWhenEveryRoutableServingWorkerIsBusyAndFreeAgainWhenOneDrains() {
        WorkerView a = worker("a").withLoad(load(0, 0, 960));
        WorkerView b = worker("b").withLoad(load(0, 20_000, 0));

        Capacity busy = only(POLICY.capacity(snapshot(List.of(a, b), Map.of())));
        assertThat(busy.saturated()).isTrue();
        assertThat(busy.freeWorkers()).isZero();
        assertThat(busy.workers()).extracting(Capacity.Headroom::busy).containsExactly(true, true);
        assertThat(busy.workers().get(0).activeBlocks()).isEqualTo(960);
        assertThat(busy.workers().get(1).queuedPrefillTokens()).isEqualTo(20_000);

        Capacity drained = only(POLICY.capacity(snapshot(List.of(a.withLoad(load(0, 0, 900)), b), Map.of())));
        assertThat(drained.saturated()).isFalse();
        assertThat(drained.freeWorkers()).isEqualTo(1);
    }

    @Test
    void bookingsSinceTheLastReportCountAsTheyDoForRouting() {
        WorkerView a = worker("a").withLoad(load(0, 0, 900));
        Map<String, ActiveLoad> booked = Map.of("a", new ActiveLoad(0, 0, 100, 1));
        ClusterSnapshot s = new ClusterSnapshot(List.of(a), Map.of(), OverlapSource.NONE, booked, Map.of());

        Capacity c = only(POLICY.capacity(s));
        assertThat(c.workers().get(0).activeBlocks()).isEqualTo(1000);
        assertThat(c.saturated()).isTrue();

        ClusterSnapshot reported = new ClusterSnapshot(List.of(a), Map.of(), OverlapSource.NONE, booked, booked);
        assertThat(only(POLICY.capacity(reported)).saturated()).as("already in the report: not counted twice").isFalse();
    }

    @Test
    void suspectAndDrainingWorkersAreListedButNeitherFreeNorCountedAsServing() {
        WorkerView busy = worker("a").withLoad(load(0, 0, 999));
        WorkerView suspect = worker("b").withRoutable(false);
        WorkerView draining = worker("c").withState(WorkerView.State.DRAINING);

        Capacity c = only(POLICY.capacity(snapshot(List.of(busy, suspect, draining), Map.of())));
        assertThat(c.workers()).hasSize(3);
        assertThat(c.saturated()).as("the only routable worker is busy").isTrue();
        assertThat(c.freeWorkers()).isZero();

        Capacity none = only(POLICY.capacity(snapshot(List.of(suspect), Map.of())));
        assertThat(none.saturated()).as("no routable worker: Route answers UNAVAILABLE, not busy").isFalse();
        assertThat(none.freeWorkers()).isZero();
    }

    @Test
    void withADecodePoolOnlyDecodeWorkersServeAndBusyPrefillWorkersDoNotSaturate() {
        WorkerView prefill = worker("p", WorkerView.Role.PREFILL).withLoad(load(0, 50_000, 0));
        WorkerView decode = worker("d", WorkerView.Role.DECODE);

        Capacity c = only(POLICY.capacity(snapshot(List.of(prefill, decode), Map.of())));
        assertThat(c.saturated()).isFalse();
        assertThat(c.freeWorkers()).isEqualTo(1);
        assertThat(c.workers()).extracting(h -> h.worker().id() + "=" + h.busy()).containsExactly("d=false", "p=true");
    }

    @Test
    void modelsAreSeparate() {
        WorkerView a = worker("a").withLoad(load(0, 0, 999));
        WorkerView b = withModel(worker("b"), "other");

        List<Capacity> models = POLICY.capacity(snapshot(List.of(a, b), Map.of()));
        assertThat(models).extracting(Capacity::model).containsExactly("m", "other");
        assertThat(models).extracting(Capacity::saturated).containsExactly(true, false);
    }

    @Test
    void withBusyThresholdsOffNothingIsEverSaturated() {
        RoutingPolicy never = new RoutingPolicy(RouterDefaults.config().withBusy(RouterConfig.Busy.NEVER), new SplittableRandom(1));
        Capacity c = only(never.capacity(snapshot(List.of(worker("a").withLoad(load(0, 99_999, 999))), Map.of())));
        assertThat(c.saturated()).isFalse();
        assertThat(c.freeWorkers()).isEqualTo(1);
    }

    /** Seeded random clusters: saturated exactly when Route answers busy; free workers exactly those Route may pick. */
    @Test
    void saturationAgreesWithRouteOnRandomClusters() {
        SplittableRandom random = new SplittableRandom(7);
        for (int round = 0; round < 500; round++) {
            int n = 1 + random.nextInt(4);
            List<WorkerView> workers = new java.util.ArrayList<>();
            for (int i = 0; i < n; i++) {
                WorkerView w = worker("w" + i, random.nextInt(4) == 0 ? WorkerView.Role.DECODE : WorkerView.Role.AGGREGATED)
                        .withLoad(load(0, random.nextInt(3) == 0 ? 20_000 : 0, random.nextInt(3) == 0 ? 990 : 10))
                        .withRoutable(random.nextInt(5) != 0);
                workers.add(w);
            }
            ClusterSnapshot s = snapshot(workers, Map.of());
            Capacity c = only(POLICY.capacity(s));
            Decision d = POLICY.decide(request("r" + round, 64), s);
            assertThat(c.saturated()).as("round %d: %s", round, workers).isEqualTo(d.outcome() == Decision.Outcome.BUSY);
            if (d.routed()) {
                assertThat(c.workers()).filteredOn(h -> h.worker().id().equals(d.workerId()))
                        .singleElement().extracting(Capacity.Headroom::busy).isEqualTo(false);
                assertThat(c.freeWorkers()).isPositive();
            }
        }
    }

    private static Capacity only(List<Capacity> models) {
        assertThat(models).hasSize(1);
        return models.get(0);
    }
}
