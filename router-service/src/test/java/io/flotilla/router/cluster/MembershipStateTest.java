package io.flotilla.router.cluster;

import io.flotilla.protocol.v1.WorkerLoad;
import io.flotilla.protocol.v1.WorkerRole;
import io.flotilla.protocol.v1.WorkerState;
import io.flotilla.protocol.v1.WorkerStatus;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The membership state as tables: each row is a list of events and every view change they produce, in order
 * ({@code id:waiting/routable}, {@code id:-} when a worker leaves routing), with what each event answers.
 * Workers hold 3 s leases.
 */
class MembershipStateTest {

    private record Event(String text, BiFunction<MembershipState, List<MembershipState.ViewChange>, Object> apply) {
        @Override
        public String toString() {
            return text;
        }
    }

    private record Row(String name, List<Event> events, List<String> changes, List<Object> answers) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static WorkerStatus status(String id, long epoch, WorkerState state, long ts, int blockSize) {
        return WorkerStatus.newBuilder().setWorkerId(id).setEpoch(epoch).setState(state).setTs(ts)
                .setRole(WorkerRole.WORKER_ROLE_AGGREGATED).setModel("m").setBlockSize(blockSize).setLeaseMs(3000)
                .setEndpoint(id + ":7100").build();
    }

    private static Event ready(String id, long epoch, long ts, long atMs) {
        return new Event(id + " ready e" + epoch + " @" + atMs,
                (s, out) -> s.onStatus(status(id, epoch, WorkerState.WORKER_STATE_READY, ts, 16), atMs, out));
    }

    private static Event stopped(String id, long epoch, long atMs) {
        return new Event(id + " stopped e" + epoch + " @" + atMs,
                (s, out) -> s.onStatus(status(id, epoch, WorkerState.WORKER_STATE_STOPPED, atMs, 16), atMs, out));
    }

    private static Event load(String id, long epoch, int waiting) {
        return new Event(id + " load e" + epoch + " waiting " + waiting, (s, out) -> s.onLoad(
                WorkerLoad.newBuilder().setWorkerId(id).setEpoch(epoch).setWaiting(waiting).build(), out));
    }

    private static Event suspect(String id, boolean on) {
        return new Event((on ? "suspect " : "cleared ") + id, (s, out) -> {
            if (on) {
                s.markSuspect(id, out);
            } else {
                s.clearSuspect(id, out);
            }
            return "-";
        });
    }

    private static Event feed(boolean healthy, long atMs) {
        return new Event("feed " + (healthy ? "up" : "down") + " @" + atMs, (s, out) -> {
            s.feedHealth(healthy, atMs);
            return "-";
        });
    }

    private static Event expire(long atMs) {
        return new Event("expire @" + atMs, (s, out) -> new TreeSet<>(s.expire(atMs, out)));
    }

    private static Event pods(String... present) {
        return new Event("pods " + List.of(present), (s, out) -> new TreeSet<>(s.podsPresent(Set.of(present), out)));
    }

    static Stream<Row> table() {
        return Stream.of(
                new Row("a worker joins, reports load and turns suspect and back, each told once",
                        List.of(ready("w0", 1, 0, 0), load("w0", 1, 3), load("w0", 9, 7), suspect("w0", true),
                                suspect("w0", true), suspect("w0", false)),
                        List.of("w0:0/true", "w0:3/true", "w0:3/false", "w0:3/true"),
                        List.of(false, true, false, "-", "-", "-")),
                new Row("an unchanged heartbeat tells nothing",
                        List.of(ready("w0", 1, 0, 0), ready("w0", 1, 0, 1000)),
                        List.of("w0:0/true"), List.of(false, false)),
                new Row("a new epoch replaces the worker and drops its load; a late old record is ignored",
                        List.of(ready("w0", 1, 100, 100), load("w0", 1, 5), ready("w0", 2, 200, 200),
                                ready("w0", 1, 150, 210), load("w0", 1, 9)),
                        List.of("w0:0/true", "w0:5/true", "w0:0/true"), List.of(false, true, true, false, false)),
                new Row("STOPPED removes only the current epoch",
                        List.of(ready("w0", 2, 10, 10), stopped("w0", 1, 20), stopped("w0", 2, 30)),
                        List.of("w0:0/true", "w0:-"), List.of(false, false, true)),
                new Row("a lease lapses one lease after the last heartbeat arrived, which changed no view",
                        List.of(ready("w0", 1, 0, 0), ready("w1", 2, 0, 0), ready("w0", 1, 2000, 2000), expire(3000),
                                expire(3001)),
                        List.of("w0:0/true", "w1:0/true", "w1:-"),
                        List.of(false, false, false, Set.of(), Set.of("w1"))),
                new Row("nobody expires while the feed is down, and leases count from its recovery",
                        List.of(ready("w0", 1, 0, 0), feed(false, 1000), expire(60_000), feed(true, 60_000),
                                expire(63_000), expire(63_001)),
                        List.of("w0:0/true", "w0:-"), List.of(false, "-", Set.of(), "-", Set.of(), Set.of("w0"))),
                new Row("a worker without a pod leaves routing until its pod is back, told once",
                        List.of(ready("w0", 1, 0, 0), ready("w1", 2, 0, 0), pods("w0"), ready("w1", 2, 1000, 1000),
                                pods("w0"), pods("w0", "w1")),
                        List.of("w0:0/true", "w1:0/true", "w1:-", "w1:0/true"),
                        List.of(false, false, Set.of("w1"), false, Set.of(), Set.of())),
                new Row("a status without a block size is known but never routable: no view to change",
                        List.of(new Event("w0 ready without block size", (s, out) ->
                                s.onStatus(status("w0", 1, WorkerState.WORKER_STATE_READY, 0, 0), 0, out))),
                        List.of(), List.of(false)),
                new Row("a load report equal to the last one tells nothing",
                        List.of(ready("w0", 1, 0, 0), load("w0", 1, 2), load("w0", 1, 2), load("w0", 1, 0)),
                        List.of("w0:0/true", "w0:2/true", "w0:0/true"), List.of(false, true, true, true)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void changesOut(Row row) {
        MembershipState state = new MembershipState();
        List<String> changes = new ArrayList<>();
        List<Object> answers = new ArrayList<>();
        for (Event e : row.events()) {
            List<MembershipState.ViewChange> out = new ArrayList<>();
            answers.add(e.apply().apply(state, out));
            out.forEach(c -> changes.add(c.workerId() + ":"
                    + (c.view() == null ? "-" : c.view().load().waiting() + "/" + c.view().routable())));
        }
        assertThat(changes).as(row.events().toString()).containsExactlyElementsOf(row.changes());
        assertThat(answers).containsExactlyElementsOf(row.answers());
    }
}
