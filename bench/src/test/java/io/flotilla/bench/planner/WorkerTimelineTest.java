package io.flotilla.bench.planner;

import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.flotilla.protocol.v1.WorkerState.WORKER_STATE_DRAINING;
import static io.flotilla.protocol.v1.WorkerState.WORKER_STATE_READY;
import static io.flotilla.protocol.v1.WorkerState.WORKER_STATE_STARTING;
import static io.flotilla.protocol.v1.WorkerState.WORKER_STATE_STOPPED;
import static org.assertj.core.api.Assertions.assertThat;

class WorkerTimelineTest {

    private static WorkerStatus status(String id, long epoch, WorkerState state, long ts) {
        return WorkerStatus.newBuilder().setWorkerId(id).setEpoch(epoch).setModel("m").setState(state).setTs(ts)
                .setLeaseMs(5_000).build();
    }

    @Test
    void aWorkerIsLiveFromItsFirstStatusUntilStoppedAndReadyOnlyWhileReady() {
        List<WorkerStatus> statuses = List.of(
                // worker-0 serves throughout the window [0, 100 s)
                status("worker-0", 1, WORKER_STATE_READY, -10_000), status("worker-0", 1, WORKER_STATE_READY, 99_000),
                // worker-1: starting at 10 s, ready at 30 s, draining at 60 s, stopped at 70 s
                status("worker-1", 2, WORKER_STATE_STARTING, 10_000), status("worker-1", 2, WORKER_STATE_READY, 30_000),
                status("worker-1", 2, WORKER_STATE_READY, 40_000), status("worker-1", 2, WORKER_STATE_DRAINING, 60_000),
                status("worker-1", 2, WORKER_STATE_STOPPED, 70_000),
                // another model's worker never counts
                WorkerStatus.newBuilder().setWorkerId("other").setModel("x").setState(WORKER_STATE_READY).setTs(0).setLeaseMs(5_000).build());
        WorkerTimeline t = WorkerTimeline.of(statuses, "m");

        assertThat(t.liveWorkerSeconds(0, 100_000)).isEqualTo(100 + 60);
        assertThat(t.readyWorkerSeconds(0, 100_000)).isEqualTo(100 + 30);
        assertThat(t.liveAt(5_000)).isEqualTo(1);
        assertThat(t.liveAt(65_000)).isEqualTo(2);
        assertThat(t.liveAt(70_000)).isEqualTo(1);
        assertThat(t.liveSeries(0, 100_000, 25_000)).containsExactly(1, 2, 2, 1);
    }

    @Test
    void aWorkerThatVanishesCountsUntilItsLeaseEndsAndANewEpochEndsTheOldOne() {
        List<WorkerStatus> statuses = List.of(
                status("worker-2", 1, WORKER_STATE_READY, 0), status("worker-2", 1, WORKER_STATE_READY, 10_000),
                // SIGKILLed after 10 s: the lease (5 s) ends at 15 s; restarted as epoch 2 at 12 s
                status("worker-2", 2, WORKER_STATE_STARTING, 12_000), status("worker-2", 2, WORKER_STATE_READY, 20_000));
        WorkerTimeline t = WorkerTimeline.of(statuses, null);

        // epoch 1: [0, 12 s); epoch 2: [12 s, 25 s) (its last status's lease)
        assertThat(t.liveWorkerSeconds(0, 100_000)).isEqualTo(25);
        assertThat(t.liveAt(13_000)).isEqualTo(1);
        assertThat(t.liveAt(30_000)).isZero();
        assertThat(t.liveWorkerSeconds(5_000, 15_000)).isEqualTo(10);
    }
    @Test
    void aProcessCountsFromItsLaunchNotFromItsFirstStatus() {
        List<WorkerStatus> statuses = List.of(
                status("worker-1", 2, WORKER_STATE_STARTING, 30_000), status("worker-1", 2, WORKER_STATE_READY, 40_000),
                status("worker-1", 2, WORKER_STATE_STOPPED, 60_000));
        // The launcher started worker-1's JVM at 18 s; it published its first status 12 s later.
        WorkerTimeline t = WorkerTimeline.of(statuses, "m").withLaunches(java.util.Map.of("worker-1", 18_000L, "worker-9", 1_000L));

        assertThat(t.liveWorkerSeconds(0, 100_000)).isEqualTo(42);
        assertThat(t.readyWorkerSeconds(0, 100_000)).isEqualTo(20);
        assertThat(t.liveAt(20_000)).isEqualTo(1);
        // A launch after every status of that worker (or of a worker never seen) adds nothing.
        assertThat(WorkerTimeline.of(statuses, "m").withLaunches(java.util.Map.of("worker-1", 70_000L))
                .liveWorkerSeconds(0, 100_000)).isEqualTo(30);
    }
}
