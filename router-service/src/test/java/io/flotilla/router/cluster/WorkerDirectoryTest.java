package io.flotilla.router.cluster;

import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import io.flotilla.router.core.WorkerView;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class WorkerDirectoryTest {

    private static WorkerStatus status(String id, long epoch, WorkerState state, long ts) {
        return WorkerStatus.newBuilder().setWorkerId(id).setEpoch(epoch).setState(state).setTs(ts)
                .setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setModel("m").setBlockSize(16).setLeaseMs(3000)
                .setEndpoint(id + ":7100").build();
    }

    @Test
    void leaseLapseRemovesAWorkerAfterItsLease() {
        WorkerDirectory d = new WorkerDirectory();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0), 0);
        d.onStatus(status("w1", 2, WorkerState.WORKER_STATE_READY, 0), 0);
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 2000), 2000);
        assertThat(d.expire(3000)).isEmpty();
        assertThat(d.expire(3001)).containsExactly("w1");
        assertThat(d.views()).extracting(WorkerView::id).containsExactly("w0");
        assertThat(d.<java.util.List<String>>scanViews(views -> views.stream().map(WorkerView::id).toList()))
                .as("a scan reads the views a copy would hold").containsExactly("w0");
    }

    @Test
    void leasesCountFromReceiptWhateverTheWorkersClockSays() {
        WorkerDirectory d = new WorkerDirectory();
        long now = 1_000_000;
        d.onStatus(status("behind", 1, WorkerState.WORKER_STATE_READY, now - 10_000), now);
        d.onStatus(status("ahead", 2, WorkerState.WORKER_STATE_READY, now + 10_000), now);
        d.onStatus(status("behind", 1, WorkerState.WORKER_STATE_READY, now - 8_000), now + 2000);
        d.onStatus(status("ahead", 2, WorkerState.WORKER_STATE_READY, now + 12_000), now + 2000);
        assertThat(d.expire(now + 5000)).as("10 s behind: not expired while it heartbeats").isEmpty();
        assertThat(d.expire(now + 5001)).as("10 s ahead: expired one lease after its last heartbeat arrived")
                .containsExactlyInAnyOrder("behind", "ahead");
    }

    @Test
    void anOutageFreezesLeasesAndRecoveryRestartsThem() {
        WorkerDirectory d = new WorkerDirectory();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0), 0);
        d.feedHealth(false, 1000);
        assertThat(d.expire(60_000)).as("nobody expires while Kafka is down").isEmpty();
        assertThat(d.size()).isEqualTo(1);
        d.feedHealth(true, 60_000);
        assertThat(d.expire(62_000)).as("lease counts from the recovery").isEmpty();
        assertThat(d.expire(63_001)).containsExactly("w0");
    }

    @Test
    void stoppedRemovesAtOnceAndOnlyForTheCurrentEpoch() {
        WorkerDirectory d = new WorkerDirectory();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0), 0);
        d.onStatus(status("w0", 2, WorkerState.WORKER_STATE_READY, 10), 10);
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_STOPPED, 20), 20);
        assertThat(d.size()).as("STOPPED of the old epoch does not remove the new process").isEqualTo(1);
        d.onStatus(status("w0", 2, WorkerState.WORKER_STATE_STOPPED, 30), 30);
        assertThat(d.size()).isZero();
    }

    @Test
    void newEpochReplacesTheWorkerAndLateOldRecordsAreIgnored() {
        WorkerDirectory d = new WorkerDirectory();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 100), 100);
        d.onLoad(WorkerLoad.newBuilder().setWorkerId("w0").setEpoch(1).setRunning(5).build());
        d.onStatus(status("w0", 2, WorkerState.WORKER_STATE_READY, 200), 200);
        assertThat(d.views().get(0).load().running()).as("old epoch's load dropped").isZero();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 150), 210);
        assertThat(d.status("w0").getEpoch()).isEqualTo(2);
        d.onLoad(WorkerLoad.newBuilder().setWorkerId("w0").setEpoch(1).setRunning(9).build());
        assertThat(d.views().get(0).load().running()).isZero();
        d.onLoad(WorkerLoad.newBuilder().setWorkerId("w0").setEpoch(2).setRunning(3).build());
        assertThat(d.views().get(0).load().running()).isEqualTo(3);
    }

    @Test
    void suspectWorkersAreNotRoutableUntilCleared() {
        WorkerDirectory d = new WorkerDirectory();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0), 0);
        d.markSuspect("w0");
        assertThat(d.views().get(0).acceptsRequests()).isFalse();
        assertThat(d.suspectEndpoints()).containsEntry("w0", "w0:7100");
        d.clearSuspect("w0");
        assertThat(d.views().get(0).acceptsRequests()).isTrue();
    }

    @Test
    void everyChangeToAWorkersViewIsToldAndALeavingWorkerIsToldAsNull() {
        WorkerDirectory d = new WorkerDirectory();
        java.util.List<String> told = new java.util.ArrayList<>();
        d.onViewChange((id, v) -> told.add(id + ":" + (v == null ? "gone" : v.load().waiting() + "/" + v.routable())));
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0), 0);
        d.onLoad(WorkerLoad.newBuilder().setWorkerId("w0").setEpoch(1).setWaiting(3).build());
        d.onLoad(WorkerLoad.newBuilder().setWorkerId("w0").setEpoch(9).setWaiting(7).build()); // another epoch: ignored
        d.markSuspect("w0");
        d.markSuspect("w0");
        d.clearSuspect("w0");
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_STOPPED, 10), 10);
        d.onStatus(status("w1", 2, WorkerState.WORKER_STATE_READY, 0), 0);
        d.expire(5000);
        assertThat(told).containsExactly("w0:0/true", "w0:3/true", "w0:3/false", "w0:3/true", "w0:gone", "w1:0/true",
                "w1:gone");
    }

    @Test
    void withAPodViewAWorkerWithoutAPodIsOutOfRoutingWhateverItsLease() {
        WorkerDirectory d = new WorkerDirectory();
        d.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0), 0);
        d.onStatus(status("w1", 2, WorkerState.WORKER_STATE_READY, 0), 0);
        assertThat(d.withoutPod()).as("no Kubernetes view: leases alone decide").isZero();

        assertThat(d.podsPresent(java.util.Set.of("w0"))).containsExactly("w1");
        assertThat(d.views()).extracting(WorkerView::id).containsExactly("w0");
        assertThat(d.withoutPod()).isEqualTo(1);
        d.onStatus(status("w1", 2, WorkerState.WORKER_STATE_READY, 1000), 1000);
        assertThat(d.views()).as("a heartbeat does not bring back a worker without a pod").extracting(WorkerView::id)
                .containsExactly("w0");
        assertThat(d.podsPresent(java.util.Set.of("w0"))).as("told once").isEmpty();

        assertThat(d.podsPresent(java.util.Set.of("w0", "w1"))).isEmpty();
        assertThat(d.views()).extracting(WorkerView::id).containsExactly("w0", "w1");
        assertThat(d.expire(4001)).as("leases still lapse").containsExactlyInAnyOrder("w0", "w1");
    }
}
