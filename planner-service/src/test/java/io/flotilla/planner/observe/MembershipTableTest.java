package io.flotilla.planner.observe;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.Pool;
import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class MembershipTableTest {

    private static WorkerStatus status(String id, long epoch, WorkerRole role, WorkerState state, long ts) {
        return WorkerStatus.newBuilder().setWorkerId(id).setEpoch(epoch).setRole(role).setModel("m").setState(state)
                .setEndpoint(id + ":7100").setLeaseMs(3000).setTs(ts).build();
    }

    @Test
    void leasesStatesAndEpochs() {
        MembershipTable t = new MembershipTable("m");
        t.onStatus(status("a", 1, WorkerRole.WORKER_ROLE_DECODE, WorkerState.WORKER_STATE_READY, 1000));
        t.onStatus(status("b", 1, WorkerRole.WORKER_ROLE_PREFILL, WorkerState.WORKER_STATE_STARTING, 1000));
        t.onStatus(status("x", 1, WorkerRole.WORKER_ROLE_DECODE, WorkerState.WORKER_STATE_READY, 1000).toBuilder()
                .setModel("other").build());
        Fleet f = t.fleet(2000, -1);
        assertThat(f.workers()).extracting(w -> w.id()).containsExactly("a", "b");
        assertThat(f.ready().get(Pool.DECODE)).isEqualTo(1);
        assertThat(f.ready().get(Pool.PREFILL)).isZero();

        assertThat(t.fleet(4001, -1).workers()).isEmpty();              // leases ran out
        assertThat(t.fleet(4001, 3000).workers()).hasSize(2);           // … unless the feed is down: frozen

        t.onStatus(status("a", 1, WorkerRole.WORKER_ROLE_DECODE, WorkerState.WORKER_STATE_STOPPED, 2500));
        assertThat(t.fleet(2600, -1).get("a")).isEmpty();
        t.onStatus(status("a", 1, WorkerRole.WORKER_ROLE_DECODE, WorkerState.WORKER_STATE_READY, 2400)); // late heartbeat
        t.onStatus(status("a", 2, WorkerRole.WORKER_ROLE_DECODE, WorkerState.WORKER_STATE_READY, 2700)); // restart
        assertThat(t.fleet(2800, -1).get("a")).hasValueSatisfying(w -> assertThat(w.since()).isEqualTo(2700));
    }

    @Test
    void loadReportsOfTheCurrentEpochSetRunning() {
        MembershipTable t = new MembershipTable("m");
        t.onStatus(status("a", 7, WorkerRole.WORKER_ROLE_AGGREGATED, WorkerState.WORKER_STATE_READY, 1000));
        t.onLoad(WorkerLoad.newBuilder().setWorkerId("a").setEpoch(6).setRunning(99).build());
        t.onLoad(WorkerLoad.newBuilder().setWorkerId("a").setEpoch(7).setRunning(5).build());
        assertThat(t.fleet(1500, -1).get("a").orElseThrow().running()).isEqualTo(5);
        assertThat(t.poolOf("a")).contains(Pool.AGGREGATED);
        t.expire(100_000, 1000);
        assertThat(t.poolOf("a")).isEmpty();
    }
}
