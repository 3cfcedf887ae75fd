package io.flotilla.planner.api;

import io.flotilla.planner.leader.LeaseElection;
import io.flotilla.planner.leader.Leadership;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@code GET /actuator/leader}: this planner replica's role ({@code leader} applies its targets, {@code follower}
 * decides only), what the election rests on and, with a Lease, this replica's identity, the holder as last read
 * and how often the lease changed hands.
 */
@Endpoint(id = "leader")
public class LeaderEndpoint {

    private final Leadership leadership;

    public LeaderEndpoint(Leadership leadership) {
        this.leadership = leadership;
    }

    @ReadOperation
    public Map<String, Object> leader() {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("role", leadership.leads() ? "leader" : "follower");
        out.put("election", leadership.describe());
        if (leadership instanceof LeaseElection lease) {
            out.put("identity", lease.identity());
            out.put("holder", lease.holder());
            out.put("transitions", lease.transitions());
        }
        return out;
    }
}
