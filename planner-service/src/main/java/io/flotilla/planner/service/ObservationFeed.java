package io.flotilla.planner.service;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.Observation;
import io.flotilla.planner.observe.IntervalAggregator;
import io.flotilla.planner.observe.MembershipTable;
import io.flotilla.protocol.v1.GatewayLoad;
import io.flotilla.protocol.v1.RequestRecord;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerStatus;

import java.time.Clock;
import java.time.Instant;

/**
 * The planner's read model: membership, the gateways' queues and the current interval, fed by the Kafka tailers' threads
 * and read by the planning thread. Every method is synchronized; each call is short.
 */
public final class ObservationFeed {

    /** Forgotten workers: lease ended this long ago. */
    private static final long FORGET_AFTER_MS = 10 * 60_000;

    private final MembershipTable membership;
    private final IntervalAggregator interval;
    private final Clock clock;

    /** @param clock when reports are received; the first interval starts now */
    public ObservationFeed(String model, Clock clock) {
        this.membership = new MembershipTable(model);
        this.interval = new IntervalAggregator(model, clock.instant());
        this.clock = clock;
    }

    public synchronized void onStatus(WorkerStatus s) {
        membership.onStatus(s);
    }

    public synchronized void onLoad(WorkerLoad load) {
        if (membership.poolOf(load.getWorkerId()).isPresent()) {
            membership.onLoad(load);
            interval.onLoad(load);
        }
    }

    public synchronized void onRequest(RequestRecord r) {
        interval.onRequest(r);
    }

    public synchronized void onGatewayLoad(GatewayLoad load) {
        interval.onGatewayLoad(load, clock.instant());
    }

    /** Requests waiting in the gateways' flow-control queues, as last reported. */
    public synchronized int gatewayQueued() {
        return interval.gatewayQueued();
    }

    /** @param membershipUnhealthySinceMs when the membership feed went unhealthy, -1 while healthy */
    public synchronized Fleet fleet(Instant now, long membershipUnhealthySinceMs) {
        membership.expire(now.toEpochMilli(), membershipUnhealthySinceMs >= 0 ? Long.MAX_VALUE / 4 : FORGET_AFTER_MS);
        return membership.fleet(now.toEpochMilli(), membershipUnhealthySinceMs);
    }

    /** Ends the current interval. */
    public synchronized Observation close(Instant now, Fleet fleet) {
        return interval.close(now, fleet, membership::poolOf);
    }
}
