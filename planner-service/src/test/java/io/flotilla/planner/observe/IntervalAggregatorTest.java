package io.flotilla.planner.observe;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.Pool;
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
}
