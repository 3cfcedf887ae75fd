package io.flotilla.planner.observe;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.GatewayModelLoad;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerState;
import org.junit.jupiter.api.Test;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class IntervalAggregatorTest {

    private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");

    private static RequestRecord record(String model, int isl, int osl, double ttft, double itl, RequestOutcome outcome) {
        return RequestRecord.newBuilder().setId("r").setModel(model).setIsl(isl).setOsl(osl).setTtftMs(ttft).setItlMs(itl)
                .setCachedTokens(isl / 4).setOutcome(outcome).build();
    }

    private static WorkerLoad load(String worker, int running, long queued, int active, int total) {
        return WorkerLoad.newBuilder().setWorkerId(worker).setRunning(running).setWaitingPrefillTokens(queued)
                .setActiveKvBlocks(active).setTotalKvBlocks(total).build();
    }

    @Test
    void requestStatisticsOfOneInterval() {
        IntervalAggregator a = new IntervalAggregator("m", T0);
        for (int i = 1; i <= 10; i++) {
            a.onRequest(record("m", 100 * i, 10 * i, 10.0 * i, i, RequestOutcome.REQUEST_OUTCOME_OK));
        }
        a.onRequest(record("m", 99999, 1, 1, 1, RequestOutcome.REQUEST_OUTCOME_TIMEOUT));      // demand, not a sample
        a.onRequest(record("m", 99999, 1, 1, 1, RequestOutcome.REQUEST_OUTCOME_CLIENT_ERROR)); // not demand
        a.onRequest(record("other", 99999, 1, 1, 1, RequestOutcome.REQUEST_OUTCOME_OK));        // other model
        Observation o = a.close(T0.plusSeconds(30), Fleet.EMPTY, id -> Optional.empty());

        assertThat(o.requests()).isEqualTo(11);
        assertThat(o.requestRate()).isCloseTo(11 / 30.0, within(1e-12));
        assertThat(o.islMean()).isCloseTo(550, within(1e-9));
        assertThat(o.islP90()).isEqualTo(900);
        assertThat(o.oslMean()).isCloseTo(55, within(1e-9));
        assertThat(o.cachedMean()).isCloseTo(550 / 4.0, within(1.0));
        assertThat(o.ttftP50Ms()).isEqualTo(50);
        assertThat(o.ttftP90Ms()).isEqualTo(90);
        assertThat(o.itlP90Ms()).isEqualTo(9);
        assertThat(o.latencySamples()).isEqualTo(10);

        Observation next = a.close(T0.plusSeconds(60), Fleet.EMPTY, id -> Optional.empty());
        assertThat(next.requests()).isZero();
        assertThat(next.islMean()).isNaN();
        assertThat(next.toProto().getMeanIsl()).isZero();
    }

    @Test
    void loadIsAveragedPerWorkerThenOverThePool() {
        IntervalAggregator a = new IntervalAggregator("m", T0);
        a.onLoad(load("p1", 2, 1000, 0, 100));
        a.onLoad(load("p1", 4, 3000, 0, 100));   // p1: 3 running, 2000 queued
        a.onLoad(load("p2", 1, 500, 0, 100));    // p2: 1 running, 500 queued
        a.onLoad(load("d1", 10, 0, 50, 100));
        a.onLoad(load("d1", 30, 0, 70, 100));    // d1: 20 running, 0.6 KV
        a.onLoad(load("d2", 40, 0, 100, 100));   // d2: 40 running, 1.0 KV
        Map<String, Pool> pools = Map.of("p1", Pool.PREFILL, "p2", Pool.PREFILL, "d1", Pool.DECODE, "d2", Pool.DECODE);
        Fleet fleet = new Fleet(List.of(
                new FleetWorker("p1", Pool.PREFILL, WorkerState.WORKER_STATE_READY, "h:1", 0, 0),
                new FleetWorker("d1", Pool.DECODE, WorkerState.WORKER_STATE_READY, "h:2", 0, 0),
                new FleetWorker("d2", Pool.DECODE, WorkerState.WORKER_STATE_STARTING, "h:3", 0, 0)));
        Observation o = a.close(T0.plusSeconds(30), fleet, id -> Optional.ofNullable(pools.get(id)));

        assertThat(o.prefillQueueTokens()).isCloseTo(2500, within(1e-9));
        assertThat(o.prefillConcurrency()).isCloseTo(2, within(1e-9));
        assertThat(o.decodeKvUsage()).isCloseTo(0.8, within(1e-9));
        assertThat(o.decodeConcurrency()).isCloseTo(30, within(1e-9));
        assertThat(o.ready().get(Pool.PREFILL)).isEqualTo(1);
        assertThat(o.ready().get(Pool.DECODE)).isEqualTo(1);
    }

    @Test
    void aggregatedWorkersServeBothSidesWithoutDedicatedPools() {
        IntervalAggregator a = new IntervalAggregator("m", T0);
        a.onLoad(load("a1", 8, 400, 25, 100));
        Observation o = a.close(T0.plusSeconds(30), Fleet.EMPTY, id -> Optional.of(Pool.AGGREGATED));
        assertThat(o.prefillQueueTokens()).isEqualTo(400);
        assertThat(o.decodeKvUsage()).isEqualTo(0.25);
        assertThat(o.decodeConcurrency()).isEqualTo(8);
    }

    @Test
    void samplesBeyondCapacityKeepAnExactMeanAndAStablePercentile() {
        SampleSet s = new SampleSet(100);
        for (int i = 0; i < 10_000; i++) {
            s.add(i % 100);
        }
        assertThat(s.mean()).isCloseTo(49.5, within(1e-9));
        assertThat(s.percentile(0.9)).isBetween(80.0, 98.0);
    }
    private static WorkerLoad inFlight(String worker, int running, int waiting) {
        return WorkerLoad.newBuilder().setWorkerId(worker).setRunning(running).setWaiting(waiting).setTotalKvBlocks(100).build();
    }

    private static Fleet fleetOf(String... workers) {
        return new Fleet(java.util.Arrays.stream(workers)
                .map(w -> new FleetWorker(w, Pool.AGGREGATED, WorkerState.WORKER_STATE_READY, "h:1", 0, 0)).toList());
    }

    @Test
    void theRequestRateCountsArrivalsFinishedPlusTheGrowthOfRequestsInFlight() {
        IntervalAggregator a = new IntervalAggregator("m", T0);
        for (int i = 0; i < 5; i++) {
            a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        }
        a.onLoad(inFlight("w1", 2, 1));
        // First interval: no starting count yet, so finished requests only.
        Observation first = a.close(T0.plusSeconds(10), fleetOf("w1"), id -> Optional.of(Pool.AGGREGATED));
        assertThat(first.requestRate()).isCloseTo(0.5, within(1e-12));

        // A burst: 2 finish, in flight goes 3 → 14 (w1 10, new w2 4): 13 arrived though only 2 finished.
        a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_REJECTED));
        a.onLoad(inFlight("w1", 6, 2));
        a.onLoad(inFlight("w1", 8, 2));
        a.onLoad(inFlight("w2", 4, 0));
        Observation burst = a.close(T0.plusSeconds(20), fleetOf("w1", "w2"), id -> Optional.of(Pool.AGGREGATED));
        assertThat(burst.requests()).isEqualTo(2);
        assertThat(burst.requestRate()).isCloseTo(1.3, within(1e-12));

        // The backlog drains: 9 finish while in flight falls 14 → 5: nothing new arrived.
        for (int i = 0; i < 9; i++) {
            a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        }
        a.onLoad(inFlight("w1", 5, 0));
        a.onLoad(inFlight("w2", 0, 0));
        assertThat(a.close(T0.plusSeconds(30), fleetOf("w1", "w2"), id -> Optional.of(Pool.AGGREGATED)).requestRate()).isZero();

        // w1 leaves the fleet with its 5 in flight: never a negative rate, and when their records come
        // (failed) in the next interval they are not counted as new arrivals; 3 that did arrive are.
        Observation gone = a.close(T0.plusSeconds(40), fleetOf("w2"), id -> Optional.of(Pool.AGGREGATED));
        assertThat(gone.requestRate()).isZero();
        for (int i = 0; i < 5; i++) {
            a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_FAILED));
        }
        a.onLoad(inFlight("w2", 3, 0));
        assertThat(a.close(T0.plusSeconds(50), fleetOf("w2"), id -> Optional.of(Pool.AGGREGATED)).requestRate())
                .isCloseTo(0.3, within(1e-12));
        // 1 finished while in flight fell by 3: −2, read as 0 and carried; it absorbs the next finished request.
        a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        a.onLoad(inFlight("w2", 0, 0));
        assertThat(a.close(T0.plusSeconds(60), fleetOf("w2"), id -> Optional.of(Pool.AGGREGATED)).requestRate()).isZero();
        a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        assertThat(a.close(T0.plusSeconds(70), fleetOf("w2"), id -> Optional.of(Pool.AGGREGATED)).requestRate())
                .isCloseTo(0, within(1e-12));
    }

    private static GatewayLoad gateway(String id, int queued) {
        return GatewayLoad.newBuilder().setGatewayId(id).setIntervalMs(1000)
                .addModels(GatewayModelLoad.newBuilder().setModel("m").setQueued(queued).setInFlight(8))
                .addModels(GatewayModelLoad.newBuilder().setModel("other").setQueued(500)).build();
    }

    @Test
    void aSaturatedPoolsOverflowWaitingAtTheGatewaysCountsAsArrivals() {
        IntervalAggregator a = new IntervalAggregator("m", T0);
        a.onLoad(inFlight("w1", 8, 0));
        a.close(T0.plusSeconds(10), fleetOf("w1"), id -> Optional.of(Pool.AGGREGATED));

        // The pool is full (8 running) and finishes 10 per interval while 30 arrive: 20 wait at two gateways.
        for (int i = 0; i < 10; i++) {
            a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        }
        a.onLoad(inFlight("w1", 8, 0));
        a.onGatewayLoad(gateway("g1", 5), T0.plusSeconds(15));
        a.onGatewayLoad(gateway("g1", 12), T0.plusSeconds(19));   // the latest report counts
        a.onGatewayLoad(gateway("g2", 8), T0.plusSeconds(19));
        Observation full = a.close(T0.plusSeconds(20), fleetOf("w1"), id -> Optional.of(Pool.AGGREGATED));
        assertThat(a.gatewayQueued()).isEqualTo(20);
        assertThat(full.requestRate()).as("10 finished + 20 more waiting, other models' queues apart").isCloseTo(3.0, within(1e-12));
        assertThat(full.prefillQueueTokens()).as("20 prompts of 100 tokens wait for prefill").isCloseTo(2000, within(1e-9));

        // The queue drains into a grown pool: 25 finish while in flight falls 28 → 18 (16 run, 2 wait): 15 arrived.
        for (int i = 0; i < 25; i++) {
            a.onRequest(record("m", 100, 10, 10, 1, RequestOutcome.REQUEST_OUTCOME_OK));
        }
        a.onLoad(inFlight("w1", 8, 0));
        a.onLoad(inFlight("w2", 8, 0));
        a.onGatewayLoad(gateway("g1", 2), T0.plusSeconds(29));
        a.onGatewayLoad(gateway("g2", 0), T0.plusSeconds(29));
        Observation drained = a.close(T0.plusSeconds(30), fleetOf("w1", "w2"), id -> Optional.of(Pool.AGGREGATED));
        assertThat(drained.requestRate()).isCloseTo(1.5, within(1e-12));

        // g1 falls silent (five intervals of 1 s): its 2 are forgotten, as a worker that left; not a negative rate.
        a.onGatewayLoad(gateway("g2", 0), T0.plusSeconds(39));
        a.onLoad(inFlight("w1", 8, 0));
        a.onLoad(inFlight("w2", 8, 0));
        Observation silent = a.close(T0.plusSeconds(40), fleetOf("w1", "w2"), id -> Optional.of(Pool.AGGREGATED));
        assertThat(a.gatewayQueued()).isZero();
        assertThat(silent.requestRate()).isZero();
        assertThat(silent.prefillQueueTokens()).isZero();

        a.onGatewayLoad(gateway("g2", 3), T0.plusSeconds(49));
        assertThat(a.close(T0.plusSeconds(50), fleetOf("w1", "w2"), id -> Optional.of(Pool.AGGREGATED)).prefillQueueTokens())
                .as("an interval without records prices its queue at the last ISL seen").isCloseTo(300, within(1e-9));
    }
}
