package io.flotilla.planner.service;

import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.leader.Leadership;
import io.flotilla.planner.plan.Planner;
import io.flotilla.planner.support.Configs;
import io.flotilla.planner.support.InMemoryConnector;
import io.flotilla.planner.support.PlannerSim;
import io.flotilla.planner.support.SimClock;
import io.flotilla.protocol.v1.PlannerDecision;
import io.flotilla.protocol.v1.RequestOutcome;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** One planning interval end to end, with the in-memory connector and sink, on a simulated clock. */
class PlannerLoopTest {

    private final SimClock clock = new SimClock(PlannerSim.T0);
    private final ObservationFeed feed = new ObservationFeed("m", clock);
    private final InMemoryConnector connector = new InMemoryConnector(PoolCounts.of(Pool.AGGREGATED, 1));
    private final List<PlannerDecision> published = new ArrayList<>();
    private final DecisionHistory history = new DecisionHistory(3);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final PlannerLoop loop = new PlannerLoop(new Planner(Configs.aggregated(), PlannerSim.MODEL), feed,
            () -> -1, connector, published::add, history, new PlannerMetrics(registry), clock);

    /** One interval: {@code n} requests during it, heartbeats of two READY workers at its end (leases are 3 s), a tick. */
    private DecisionRecord interval(int n) {
        for (int i = 0; i < n; i++) {
            feed.onRequest(RequestRecord.newBuilder().setId("r" + i).setModel("m").setIsl(2000).setOsl(200).setTtftMs(100)
                    .setItlMs(20).setOutcome(RequestOutcome.REQUEST_OUTCOME_OK).build());
        }
        clock.advance(Duration.ofSeconds(30));
        for (String id : List.of("w0", "w1")) {
            feed.onStatus(WorkerStatus.newBuilder().setWorkerId(id).setEpoch(1).setModel("m").setRole(WorkerRole.WORKER_ROLE_AGGREGATED)
                    .setState(WorkerState.WORKER_STATE_READY).setEndpoint(id + ":7100").setLeaseMs(3000).setTs(clock.millis()).build());
        }
        return loop.tick();
    }

    private double gauge(String name, String tag, String value) {
        return registry.get(name).tag(tag, value).gauge().value();
    }

    @Test
    void decidesAppliesRecordsPublishesAndExports() {
        DecisionRecord r = interval(300); // 10 req/s
        assertThat(r.published().getConnector()).isEqualTo("in-memory");
        assertThat(r.published().getObserved().getRequestRate()).isEqualTo(10);
        assertThat(r.applied()).isEqualTo(r.targets());
        assertThat(r.published().getApplied().getAggregated()).isEqualTo(r.targets().get(Pool.AGGREGATED));
        assertThat(r.ready().get(Pool.AGGREGATED)).isEqualTo(2);
        assertThat(connector.replicas().get(Pool.AGGREGATED)).isEqualTo(r.targets().get(Pool.AGGREGATED));
        assertThat(published).containsExactly(r.published());
        assertThat(history.newest(10)).containsExactly(r);

        assertThat(registry.get("flotilla.planner.predicted_requests_per_second").gauge().value()).isEqualTo(10);
        assertThat(gauge("flotilla.planner.target_replicas", "pool", "aggregated")).isEqualTo(r.targets().get(Pool.AGGREGATED));
        assertThat(gauge("flotilla.planner.ready_replicas", "pool", "aggregated")).isEqualTo(2);
        assertThat(gauge("flotilla.planner.prediction_error", "series", "request_rate")).isZero();
        assertThat(registry.get("flotilla.planner.prediction_shortfall").gauge().value()).isZero();
        assertThat(registry.get("flotilla.planner.ready_time").gauge().value()).isEqualTo(120);
        assertThat(gauge("flotilla.planner.break_even", "pool", "aggregated")).isEqualTo(120);
        assertThat(registry.get("flotilla.planner.period").gauge().value()).isNaN();
        assertThat(registry.get("flotilla.planner.decisions").tag("applied", "true").counter().count()).isEqualTo(1);

        for (int i = 0; i < 4; i++) {
            interval(300);
        }
        assertThat(history.newest(10)).hasSize(3); // bounded, newest first
        assertThat(history.newest(10).get(0).published().getTs()).isEqualTo(clock.millis());
    }

    @Test
    void aHandEditIsHeldAndAConnectorFailureCostsOnlyThatInterval() {
        interval(60);
        connector.setByHand(Pool.AGGREGATED, 4);
        DecisionRecord held = interval(60);
        assertThat(held.targets().get(Pool.AGGREGATED)).isEqualTo(4);
        assertThat(held.decision().reason()).contains("set by hand");
        assertThat(connector.replicas().get(Pool.AGGREGATED)).isEqualTo(4);

        connector.failing(true);
        DecisionRecord failed = interval(60);
        assertThat(failed.applied()).isNull();
        assertThat(failed.published().hasApplied()).isFalse();
        assertThat(registry.get("flotilla.planner.decisions").tag("applied", "false").counter().count()).isEqualTo(1);
        connector.failing(false);
        assertThat(interval(60).applied()).isNotNull();
    }

    @Test
    void aFollowerDecidesAndPublishesButAppliesNothing() {
        boolean[] leads = {false};
        Leadership follower = new Leadership() {
            @Override
            public boolean leads() {
                return leads[0];
            }

            @Override
            public String describe() {
                return "test";
            }
        };
        SimpleMeterRegistry own = new SimpleMeterRegistry();
        PlannerLoop replica = new PlannerLoop(new Planner(Configs.aggregated(), PlannerSim.MODEL), feed, () -> -1, connector,
                published::add, history, new PlannerMetrics(own, follower), clock, follower);
        for (int i = 0; i < 300; i++) {
            feed.onRequest(RequestRecord.newBuilder().setId("r" + i).setModel("m").setIsl(2000).setOsl(200).setTtftMs(100)
                    .setItlMs(20).setOutcome(RequestOutcome.REQUEST_OUTCOME_OK).build());
        }
        clock.advance(Duration.ofSeconds(30));

        DecisionRecord r = replica.tick();
        assertThat(r.targets().get(Pool.AGGREGATED)).isGreaterThan(1);
        assertThat(r.applied()).isNull();
        assertThat(r.published().hasApplied()).isFalse();
        assertThat(connector.applied()).isEmpty();
        assertThat(own.get("flotilla.planner.leader").gauge().value()).isZero();
        assertThat(own.get("flotilla.planner.decisions").tag("applied", "false").counter().count()).isEqualTo(1);

        leads[0] = true;
        clock.advance(Duration.ofSeconds(30));
        assertThat(replica.tick().applied()).isNotNull();
        assertThat(connector.applied()).hasSize(1);
        assertThat(own.get("flotilla.planner.leader").gauge().value()).isEqualTo(1);
    }
}
