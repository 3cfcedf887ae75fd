package io.flotilla.planner.service;

import io.flotilla.planner.connector.ConnectorView;
import io.flotilla.planner.connector.ScalingConnector;
import io.flotilla.planner.core.ClusterView;
import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.leader.Leadership;
import io.flotilla.planner.plan.Planner;
import io.flotilla.planner.plan.ScalingDecision;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Clock;
import java.time.Instant;
import java.util.function.LongSupplier;

/**
 * One planning interval: close the observation, ask the connector what the world is set to, decide
 * ({@link Planner#plan}: a {@link ScalingDecision}, nothing changed yet), apply its targets through the
 * connector, then record, publish and export the decision with what was applied. A connector or Kafka failure costs this interval's application, never the loop.
 * A replica that does not lead ({@link Leadership}) decides, records and exports as the leader does but applies nothing:
 * its decisions are published with no applied counts.
 */
public final class PlannerLoop {

    private static final Logger log = LoggerFactory.getLogger(PlannerLoop.class);

    private final Planner planner;
    private final ObservationFeed feed;
    private final LongSupplier membershipUnhealthySince;
    private final ScalingConnector connector;
    private final DecisionSink sink;
    private final DecisionHistory history;
    private final PlannerMetrics metrics;
    private final Clock clock;
    private final Leadership leadership;

    /** A sole planner: it always applies. */
    public PlannerLoop(Planner planner, ObservationFeed feed, LongSupplier membershipUnhealthySince, ScalingConnector connector,
                       DecisionSink sink, DecisionHistory history, PlannerMetrics metrics, Clock clock) {
        this(planner, feed, membershipUnhealthySince, connector, sink, history, metrics, clock, Leadership.SOLE);
    }

    public PlannerLoop(Planner planner, ObservationFeed feed, LongSupplier membershipUnhealthySince, ScalingConnector connector,
                       DecisionSink sink, DecisionHistory history, PlannerMetrics metrics, Clock clock, Leadership leadership) {
        this.planner = planner;
        this.feed = feed;
        this.membershipUnhealthySince = membershipUnhealthySince;
        this.connector = connector;
        this.sink = sink;
        this.history = history;
        this.metrics = metrics;
        this.clock = clock;
        this.leadership = leadership;
    }

    public synchronized DecisionRecord tick() {
        Instant now = clock.instant();
        Fleet fleet = feed.fleet(now, membershipUnhealthySince.getAsLong());
        ConnectorView world;
        try {
            world = connector.observe(fleet);
        } catch (RuntimeException e) {
            log.warn("{} connector cannot observe the cluster: {}", connector.name(), e.toString());
            world = ConnectorView.UNKNOWN;
        }
        fleet = fleet.starting(world.notWhole()); // a multi-pod instance is ready once every rank is
        Observation observed = feed.close(now, fleet);
        ScalingDecision decision = planner.plan(new ClusterView(observed, world.current(), world.changedByHand()), now);
        PoolCounts applied = null;
        if (leadership.leads()) {
            try {
                applied = connector.apply(decision.targets(), fleet).orElse(null);
            } catch (RuntimeException e) {
                log.warn("{} connector failed to apply {}: {}", connector.name(), decision.targets(), e.toString());
            }
        }
        DecisionRecord record = DecisionRecord.of(decision, connector.name(), applied);
        history.add(record);
        sink.publish(record.published());
        metrics.decided(record);
        if (log.isDebugEnabled()) {
            log.debug("decision: targets {} applied {}: {}", decision.targets(), applied, decision.reason());
        }
        return record;
    }
}
