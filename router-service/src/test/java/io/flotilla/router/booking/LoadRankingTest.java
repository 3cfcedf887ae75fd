package io.flotilla.router.booking;

import io.flotilla.router.core.RouterDefaults;
import io.flotilla.router.core.WorkerView;
import io.flotilla.router.core.ActiveLoad;
import io.flotilla.router.core.CostUnit;
import io.flotilla.router.core.Decision;
import io.flotilla.router.core.Fixtures;
import io.flotilla.router.core.ModeUsed;
import io.flotilla.router.core.RouterConfig;
import io.flotilla.router.core.WorkerRanking;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.flotilla.router.core.Fixtures.load;
import static io.flotilla.router.core.Fixtures.worker;
import static org.assertj.core.api.Assertions.assertThat;

/** The ledger's ranking follows reports, bookings and membership without a scan. */
class LoadRankingTest {

    private static final Instant T0 = Instant.parse("2025-01-01T00:00:00Z");

    private static List<String> order(WorkerRanking r, CostUnit unit) {
        List<String> ids = new ArrayList<>();
        r.ascending(Fixtures.MODEL, Fixtures.BS, unit).forEachRemaining(e -> ids.add(e.id()));
        return ids;
    }

    @Test
    void workersAreOrderedByTheirLoadCostAndReRankedWhenReportsChange() {
        LoadRanking r = new LoadRanking(RouterDefaults.config());
        r.put(worker("a").withLoad(load(0, 4000, 500)), ActiveLoad.NONE, ActiveLoad.NONE);
        r.put(worker("b").withLoad(load(0, 0, 100)), ActiveLoad.NONE, ActiveLoad.NONE);
        r.put(worker("c").withLoad(load(2, 800, 300)), ActiveLoad.NONE, ActiveLoad.NONE);
        assertThat(order(r, CostUnit.MILLISECONDS)).containsExactly("b", "c", "a");
        assertThat(order(r, CostUnit.BLOCKS)).containsExactly("b", "c", "a");

        r.put(worker("b").withLoad(load(5, 9000, 900)), ActiveLoad.NONE, ActiveLoad.NONE);
        assertThat(order(r, CostUnit.MILLISECONDS)).containsExactly("c", "a", "b");
        r.remove("c");
        assertThat(order(r, CostUnit.MILLISECONDS)).containsExactly("a", "b");
        assertThat(r.get("c")).isNull();
    }

    @Test
    void unpricedWorkersAreRankedInBlocksOnlyAndDisaggregatedModelsAreFlagged() {
        LoadRanking r = new LoadRanking(RouterDefaults.config());
        r.put(worker("a"), ActiveLoad.NONE, ActiveLoad.NONE);
        r.put(Fixtures.untimed("u"), ActiveLoad.NONE, ActiveLoad.NONE);
        assertThat(order(r, CostUnit.MILLISECONDS)).containsExactly("a");
        assertThat(order(r, CostUnit.BLOCKS)).containsExactlyInAnyOrder("a", "u");
        assertThat(r.unpriced(Fixtures.MODEL, Fixtures.BS)).extracting(WorkerRanking.Ranked::id).containsExactly("u");
        assertThat(r.get("u").msCost()).isNaN();

        assertThat(r.disaggregated(Fixtures.MODEL, Fixtures.BS)).isFalse();
        r.put(worker("d", WorkerView.Role.DECODE), ActiveLoad.NONE, ActiveLoad.NONE);
        assertThat(r.disaggregated(Fixtures.MODEL, Fixtures.BS)).isTrue();
        assertThat(r.get("d")).as("prefill and decode workers are counted, not ranked").isNull();
        r.remove("d");
        assertThat(r.disaggregated(Fixtures.MODEL, Fixtures.BS)).isFalse();
    }

    @Test
    void aBookingMovesItsWorkerDownTheRankingAndItsReleaseBack() {
        BookingLedger ledger = BookingLedger.create("r1", RouterDefaults.config());
        ledger.workerChanged("a", worker("a"));
        ledger.workerChanged("b", worker("b").withLoad(load(0, 100, 10)));
        assertThat(order(ledger.ranking(), CostUnit.MILLISECONDS)).containsExactly("a", "b");

        Decision toA = new Decision(Decision.Outcome.ROUTED, "a", "a:7100", "", "", 0, 0, 2000, 200, Map.of(),
                ModeUsed.KV, CostUnit.MILLISECONDS, 0);
        ledger.book(Fixtures.request("q1", 2000), toA, T0);
        assertThat(ledger.ranking().get("a").booked()).isEqualTo(new ActiveLoad(2000, 1, 200, 1));
        assertThat(order(ledger.ranking(), CostUnit.MILLISECONDS)).containsExactly("b", "a");

        ledger.release("q1", T0);
        assertThat(order(ledger.ranking(), CostUnit.MILLISECONDS)).containsExactly("a", "b");
        ledger.workerChanged("a", null);
        assertThat(order(ledger.ranking(), CostUnit.MILLISECONDS)).containsExactly("b");
    }
}
