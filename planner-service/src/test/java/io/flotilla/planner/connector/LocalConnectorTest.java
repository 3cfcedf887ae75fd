package io.flotilla.planner.connector;

import io.flotilla.planner.core.Fleet;
import io.flotilla.planner.core.FleetWorker;
import io.flotilla.planner.core.Pool;
import io.flotilla.planner.core.PoolCounts;
import io.flotilla.planner.support.SimClock;
import io.flotilla.protocol.v1.WorkerState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** The local connector with a fake process runner and a fake drain client. */
class LocalConnectorTest {

    @TempDir
    Path home;

    private final SimClock clock = new SimClock(Instant.parse("2026-01-01T00:00:00Z"));
    private final List<List<String>> commands = new ArrayList<>();
    private final List<CompletableFuture<Integer>> runs = new ArrayList<>();
    private final List<String> drained = new ArrayList<>();
    private LocalConnector connector;

    @BeforeEach
    void setUp() throws IOException {
        Files.createDirectories(home.resolve(".flotilla"));
        // Launcher state of `bin/flotilla up --prefill 2 --decode 2`: workers 0-1 prefill, 2-3 decode.
        Files.writeString(home.resolve(".flotilla/cluster.properties"), "layout.prefill=2\nlayout.decode=2\nlayout.aggregated=2\n");
        ProcessRunner runner = (command, dir) -> {
            assertThat(dir).isEqualTo(home);
            commands.add(command);
            CompletableFuture<Integer> f = new CompletableFuture<>();
            runs.add(f);
            return f;
        };
        DrainClient drains = (endpoint, deadline) -> {
            assertThat(deadline).isEqualTo(Duration.ofSeconds(60));
            drained.add(endpoint);
            return new CompletableFuture<>();
        };
        connector = new LocalConnector(home, runner, drains, Duration.ofSeconds(60), clock, 16);
    }

    private static FleetWorker worker(int n, Pool pool, WorkerState state, int running, long since) {
        return new FleetWorker("worker-" + n, pool, state, "127.0.0.1:" + (7100 + n), running, since);
    }

    @Test
    void startsFreeWorkersOfTheRoleAndDrainsTheLeastBusy() {
        Fleet fleet = new Fleet(List.of(
                worker(0, Pool.PREFILL, WorkerState.WORKER_STATE_READY, 3, 0),
                worker(2, Pool.DECODE, WorkerState.WORKER_STATE_READY, 9, 0),
                worker(3, Pool.DECODE, WorkerState.WORKER_STATE_READY, 1, 0)));

        PoolCounts applied = connector.apply(PoolCounts.of(Pool.PREFILL, 2, Pool.DECODE, 1), fleet).orElseThrow();

        assertThat(applied).isEqualTo(PoolCounts.of(Pool.PREFILL, 2, Pool.DECODE, 1));
        assertThat(commands).containsExactly(List.of(home.resolve("bin/flotilla").toString(), "start-worker", "1"));
        assertThat(drained).containsExactly("127.0.0.1:7103"); // worker-3 runs fewer requests than worker-2
        assertThat(commands).allSatisfy(c -> assertThat(c).doesNotContain("kill-worker"));
        // Our own changes in flight are not hand-made changes.
        ConnectorView view = connector.observe(fleet);
        assertThat(view.current()).isEqualTo(PoolCounts.of(Pool.PREFILL, 2, Pool.DECODE, 1));
        assertThat(view.changedByHand()).isEmpty();
    }

    @Test
    void aFailedStartIsNotRetriedAtOnceAndNoRoleIsBorrowed() {
        Fleet fleet = new Fleet(List.of(worker(0, Pool.PREFILL, WorkerState.WORKER_STATE_READY, 0, 0)));
        connector.apply(PoolCounts.of(Pool.PREFILL, 2), fleet);
        runs.get(0).complete(1); // start-worker 1 failed
        // Workers 0 and 1 are the only prefill numbers: nothing left to start, and decode numbers are never used.
        PoolCounts applied = connector.apply(PoolCounts.of(Pool.PREFILL, 2), fleet).orElseThrow();
        assertThat(applied.get(Pool.PREFILL)).isEqualTo(1);
        assertThat(commands).hasSize(1);
        clock.advance(LocalConnector.RETRY_AFTER.plusSeconds(1));
        connector.apply(PoolCounts.of(Pool.PREFILL, 2), fleet);
        assertThat(commands).hasSize(2).last().isEqualTo(List.of(home.resolve("bin/flotilla").toString(), "start-worker", "1"));
    }

    @Test
    void drainedWorkersAreNeverRestartedUnderTheirOldNumber() {
        Fleet fleet = new Fleet(List.of(
                worker(2, Pool.DECODE, WorkerState.WORKER_STATE_READY, 0, 0),
                worker(3, Pool.DECODE, WorkerState.WORKER_STATE_READY, 5, 0)));
        connector.apply(PoolCounts.of(Pool.DECODE, 1), fleet);
        assertThat(drained).containsExactly("127.0.0.1:7102");
        // worker-2 finished draining (STOPPED, gone from membership) but its process still holds its ports.
        Fleet after = new Fleet(List.of(worker(3, Pool.DECODE, WorkerState.WORKER_STATE_READY, 5, 0)));
        connector.apply(PoolCounts.of(Pool.DECODE, 2), after);
        assertThat(commands).containsExactly(List.of(home.resolve("bin/flotilla").toString(), "start-worker", "4"));
    }

    @Test
    void handMadeChangesAreReportedOnceNothingOfOursIsInFlight() {
        Fleet fleet = new Fleet(List.of(worker(2, Pool.DECODE, WorkerState.WORKER_STATE_READY, 0, 0)));
        connector.apply(PoolCounts.of(Pool.DECODE, 1), fleet);
        assertThat(connector.observe(fleet).changedByHand()).isEmpty();
        // Someone ran `bin/flotilla start-worker 5`.
        Fleet more = new Fleet(List.of(worker(2, Pool.DECODE, WorkerState.WORKER_STATE_READY, 0, 0),
                worker(5, Pool.DECODE, WorkerState.WORKER_STATE_STARTING, 0, 1000)));
        ConnectorView view = connector.observe(more);
        assertThat(view.changedByHand()).containsExactly(Pool.DECODE);
        assertThat(view.current().get(Pool.DECODE)).isEqualTo(2);
        // The planner adopts 2: nothing to do, and no longer a hand-made change.
        connector.apply(PoolCounts.of(Pool.DECODE, 2), more);
        assertThat(commands).isEmpty();
        assertThat(drained).isEmpty();
        assertThat(connector.observe(more).changedByHand()).isEmpty();
    }

    @Test
    void aStartedWorkerCountsUntilItShowsUp() {
        Fleet none = Fleet.EMPTY;
        connector.apply(PoolCounts.of(Pool.DECODE, 1), none);
        assertThat(commands).containsExactly(List.of(home.resolve("bin/flotilla").toString(), "start-worker", "2"));
        runs.get(0).complete(0);
        assertThat(connector.observe(none).current().get(Pool.DECODE)).isEqualTo(1); // not yet in membership
        Fleet seen = new Fleet(List.of(worker(2, Pool.DECODE, WorkerState.WORKER_STATE_READY, 0, 5)));
        ConnectorView view = connector.observe(seen);
        assertThat(view.current().get(Pool.DECODE)).isEqualTo(1);
        assertThat(view.changedByHand()).isEmpty();
        connector.apply(PoolCounts.of(Pool.DECODE, 1), seen);
        assertThat(commands).hasSize(1);
    }
    /** Launcher state with worker-2 (a decode worker) run by this very JVM, so its pid is alive. */
    private LocalConnector withLiveWorker2Process(SimClock at) throws IOException {
        ProcessHandle self = ProcessHandle.current();
        Instant started = self.info().startInstant().orElseThrow();
        Files.writeString(home.resolve(".flotilla/cluster.properties"), "layout.prefill=2\nlayout.decode=2\nlayout.aggregated=2\n"
                + "services=kafka,worker-2\nkafka.pid=1\nworker-2.pid=" + self.pid() + "\nworker-2.started=" + started.toEpochMilli() + "\n");
        ProcessRunner runner = (command, dir) -> {
            commands.add(command);
            CompletableFuture<Integer> f = new CompletableFuture<>();
            runs.add(f);
            return f;
        };
        return new LocalConnector(home, runner, (endpoint, deadline) -> new CompletableFuture<>(), Duration.ofSeconds(60), at, 16);
    }

    @Test
    void aWorkerTheLauncherIsStillStartingCountsAndIsNotStartedTwice() throws IOException {
        Instant started = ProcessHandle.current().info().startInstant().orElseThrow();
        SimClock at = new SimClock(started.plusSeconds(5)); // `bin/flotilla up` launched worker-2 5 s ago
        LocalConnector c = withLiveWorker2Process(at);

        PoolCounts applied = c.apply(PoolCounts.of(Pool.DECODE, 1), Fleet.EMPTY).orElseThrow();

        assertThat(applied.get(Pool.DECODE)).isEqualTo(1);
        assertThat(commands).as("worker-2 is starting already").isEmpty();
        ConnectorView before = c.observe(Fleet.EMPTY);
        assertThat(before.current().get(Pool.DECODE)).isEqualTo(1);
        assertThat(before.changedByHand()).isEmpty();
        Fleet seen = new Fleet(List.of(worker(2, Pool.DECODE, WorkerState.WORKER_STATE_READY, 0, 5)));
        assertThat(c.observe(seen).current().get(Pool.DECODE)).isEqualTo(1);
        assertThat(c.observe(seen).changedByHand()).isEmpty();
    }

    @Test
    void anOldIdleProcessOfTheLauncherIsNotCountedAndItsNumberIsSkipped() throws IOException {
        Instant started = ProcessHandle.current().info().startInstant().orElseThrow();
        // worker-2's process has run for ten minutes and is not in membership: drained (STOPPED) and idle,
        // e.g. before this planner restarted. It holds worker-2's ports, so the next decode number is used.
        SimClock at = new SimClock(started.plus(Duration.ofMinutes(10)));
        LocalConnector c = withLiveWorker2Process(at);

        PoolCounts applied = c.apply(PoolCounts.of(Pool.DECODE, 1), Fleet.EMPTY).orElseThrow();

        assertThat(applied.get(Pool.DECODE)).isEqualTo(1);
        assertThat(commands).containsExactly(List.of(home.resolve("bin/flotilla").toString(), "start-worker", "3"));
    }

    @Test
    void theLayoutReadsOnlyLiveWorkerProcesses() throws IOException {
        ProcessHandle self = ProcessHandle.current();
        long startedMs = self.info().startInstant().orElseThrow().toEpochMilli();
        Files.writeString(home.resolve(".flotilla/cluster.properties"), "layout.prefill=1\nlayout.decode=1\n"
                + "services=router,worker-0,worker-1,worker-2\nrouter.pid=" + self.pid() + "\nrouter.started=" + startedMs
                + "\nworker-0.pid=" + self.pid() + "\nworker-0.started=" + startedMs
                // worker-1: this pid, but another process's start time (the pid was reused)
                + "\nworker-1.pid=" + self.pid() + "\nworker-1.started=" + (startedMs - 3_600_000)
                + "\nworker-2.pid=" + Long.MAX_VALUE + "\nworker-2.started=" + startedMs + "\n");
        LocalLayout layout = LocalLayout.read(home);
        assertThat(layout.processes()).containsOnlyKeys("worker-0");
        assertThat(layout.poolOf("worker-0")).contains(Pool.PREFILL);
        assertThat(layout.poolOf("worker-7")).contains(Pool.DECODE);
        assertThat(layout.poolOf("router")).isEmpty();
    }
}
