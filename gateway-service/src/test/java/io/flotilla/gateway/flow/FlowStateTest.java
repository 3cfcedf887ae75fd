package io.flotilla.gateway.flow;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flow state as tables: each row is a model's limits, what the gate says, a list of events (with
 * the time each comes at) and every effect they return, in order, then the queued and in-flight counts.
 * Requests are named by their handle; every request of flow {@code f} is named {@code f...}.
 */
class FlowStateTest {

    private static final FlowLimits ONE = new FlowLimits(1, 2, 1, Duration.ofSeconds(30));
    private static final FlowLimits TEN_ROUTING_TWO = new FlowLimits(10, 10, 2, Duration.ofSeconds(30));
    private static final FlowLimits QUEUE_OF_ONE = new FlowLimits(1, 1, 1, Duration.ofSeconds(30));
    private static final FlowLimits WIDE = new FlowLimits(10, 10, 10, Duration.ofSeconds(30));
    /** Flow "a" is limited and may try; every other flow is unlimited. */
    private static final GateView A_LIMITED = new GateView(f -> f.equals("a"), f -> true);
    /** Flow "a" is limited and at its limit. */
    private static final GateView A_FULL = new GateView(f -> f.equals("a"), f -> !f.equals("a"));

    /** One event at a time; {@code toString} is how the row reads. */
    private record Event(String text, Function<FlowState<String>, List<FlowEffect<String>>> apply) {
        @Override
        public String toString() {
            return text;
        }
    }

    private record Row(String name, FlowLimits limits, GateView gate, List<Event> events, List<FlowEffect<String>> effects,
                       int queued, int inFlight) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static long ms(long ms) {
        return Duration.ofMillis(ms).toNanos();
    }

    // events; time in milliseconds, deadlines absolute

    private static Event admit(String who, Priority band, long deadlineMs, long atMs, GateView gate) {
        FlowRequest r = new FlowRequest(who, "m", band, who.substring(0, 1), 10, ms(deadlineMs));
        return new Event("admit " + who + " @" + atMs, s -> s.admit(who, r, false, ms(atMs), gate));
    }

    private static Event admit(String who, long atMs) {
        return admit(who, Priority.STANDARD, 30_000, atMs, GateView.NONE);
    }

    private static Event readmit(String who, long atMs) {
        FlowRequest r = new FlowRequest(who, "m", Priority.STANDARD, who.substring(0, 1), 10, ms(30_000));
        return new Event("readmit " + who + " @" + atMs, s -> s.admit(who, r, true, ms(atMs), GateView.NONE));
    }

    private static Event released(boolean wasRouting, long atMs) {
        return new Event("released @" + atMs, s -> s.released(wasRouting, ms(atMs), GateView.NONE));
    }

    private static Event routed(long atMs) {
        return new Event("routed @" + atMs, s -> s.routed(ms(atMs), GateView.NONE));
    }

    private static Event capacity(Boolean saturated, long atMs) {
        return new Event("capacity " + saturated + " @" + atMs, s -> s.capacity(saturated, ms(atMs), GateView.NONE));
    }

    private static Event busy(long retryAfterMs, long atMs) {
        return new Event("busy " + retryAfterMs + " @" + atMs, s -> s.busy(Duration.ofMillis(retryAfterMs), ms(atMs)));
    }

    private static Event dispatch(long atMs, GateView gate) {
        return new Event("dispatch @" + atMs, s -> s.dispatch(ms(atMs), gate));
    }

    private static Event expire(String who, long atMs) {
        return new Event("expire " + who + " @" + atMs, s -> s.expire(who, ms(atMs)));
    }

    private static Event cancel(String who) {
        return new Event("cancel " + who, s -> s.cancel(who));
    }

    private static Event answered(String who, boolean leased, long atMs) {
        return new Event("gate answers " + who + (leased ? " a place" : " full") + " @" + atMs,
                s -> s.gateAnswered(who, leased, ms(atMs)));
    }

    // effects

    private static FlowEffect<String> grant(String who, long waitedMs) {
        return new FlowEffect.Grant<>(who, Duration.ofMillis(waitedMs), false);
    }

    private static FlowEffect<String> grantLeased(String who, long waitedMs) {
        return new FlowEffect.Grant<>(who, Duration.ofMillis(waitedMs), true);
    }

    private static FlowEffect<String> reject(String who, FlowRejection why) {
        return new FlowEffect.Reject<>(who, why);
    }

    private static FlowEffect<String> queued(String who) {
        return new FlowEffect.Queued<>(who);
    }

    private static FlowEffect<String> left(String who) {
        return new FlowEffect.Left<>(who);
    }

    private static FlowEffect<String> timer(String who, long inMs) {
        return new FlowEffect.ArmExpiry<>(who, ms(inMs));
    }

    private static FlowEffect<String> ask(String who) {
        return new FlowEffect.AskGate<>(who, who.substring(0, 1));
    }

    private static FlowEffect<String> cancelled(String who) {
        return new FlowEffect.Cancelled<>(who);
    }

    private static FlowEffect<String> returnLease(String who) {
        return new FlowEffect.ReturnLease<>(who);
    }

    private static FlowEffect<String> busyTimer(long inMs) {
        return new FlowEffect.ArmBusyTimer<>(ms(inMs));
    }

    private static Row row(String name, FlowLimits limits, GateView gate, List<Event> events, List<FlowEffect<String>> effects,
                           int queued, int inFlight) {
        return new Row(name, limits, gate, events, effects, queued, inFlight);
    }

    static Stream<Row> rows() {
        return Stream.of(
                row("an idle model grants at once", ONE, GateView.NONE,
                        List.of(admit("a1", 0)),
                        List.of(grant("a1", 0)), 0, 1),
                row("a saturated model queues, with a timer at the deadline", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 100)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 29_900)), 1, 1),
                row("a release grants the head, with its wait", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 0), released(true, 250)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 30_000), left("a2"), grant("a2", 250)), 0, 1),
                row("a higher band goes first whatever the arrival order", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("b1", Priority.BATCH, 30_000, 0, GateView.NONE),
                                admit("i1", Priority.INTERACTIVE, 30_000, 0, GateView.NONE), released(true, 10)),
                        List.of(grant("a1", 0), queued("b1"), timer("b1", 30_000), queued("i1"), timer("i1", 30_000),
                                left("i1"), grant("i1", 10)), 1, 1),
                row("inside a flow the earliest deadline goes first", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", Priority.STANDARD, 30_000, 0, GateView.NONE),
                                admit("a3", Priority.STANDARD, 5_000, 0, GateView.NONE), released(true, 10)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 30_000), queued("a3"), timer("a3", 5_000),
                                left("a3"), grant("a3", 10)), 1, 1),
                row("a full queue rejects when nothing lower waits", QUEUE_OF_ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 0), admit("a3", 0)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 30_000),
                                reject("a3", new FlowRejection.QueueFull(1, 1))), 1, 1),
                row("a readmission enters a full queue", QUEUE_OF_ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 0), readmit("a3", 0)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 30_000), queued("a3"), timer("a3", 30_000)), 2, 1),
                row("a higher band displaces the lowest band's latest deadline", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("b1", Priority.BATCH, 10_000, 0, GateView.NONE),
                                admit("c1", Priority.BATCH, 60_000, 0, GateView.NONE),
                                admit("i1", Priority.INTERACTIVE, 30_000, 0, GateView.NONE)),
                        List.of(grant("a1", 0), queued("b1"), timer("b1", 10_000), queued("c1"), timer("c1", 60_000),
                                left("c1"), reject("c1", new FlowRejection.Displaced(Priority.INTERACTIVE, Priority.BATCH)),
                                queued("i1"), timer("i1", 30_000)), 2, 1),
                row("only lower bands are displaced", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("b1", Priority.BATCH, 10_000, 0, GateView.NONE),
                                admit("c1", Priority.BATCH, 60_000, 0, GateView.NONE),
                                admit("d1", Priority.BATCH, 30_000, 0, GateView.NONE)),
                        List.of(grant("a1", 0), queued("b1"), timer("b1", 10_000), queued("c1"), timer("c1", 60_000),
                                reject("d1", new FlowRejection.QueueFull(2, 2))), 2, 1),
                row("a deadline already passed never waits", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", Priority.STANDARD, 0, 0, GateView.NONE)),
                        List.of(grant("a1", 0), reject("a2", new FlowRejection.QueueTimeout(0))), 0, 1),
                row("a waiter's timer rejects it with its wait", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", Priority.STANDARD, 2_000, 0, GateView.NONE), expire("a2", 2_000)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 2_000), left("a2"),
                                reject("a2", new FlowRejection.QueueTimeout(ms(2_000)))), 0, 1),
                row("the timer of a granted request does nothing", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 0), released(true, 100), expire("a2", 30_000)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 30_000), left("a2"), grant("a2", 100)), 0, 1),
                row("a cancelled waiter leaves at once and is not granted", ONE, GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 0), cancel("a2"), cancel("a2"), released(true, 100)),
                        List.of(grant("a1", 0), queued("a2"), timer("a2", 30_000), left("a2"), cancelled("a2")), 0, 0),
                row("a cancel after the grant is the slot's to release", ONE, GateView.NONE,
                        List.of(admit("a1", 0), cancel("a1")),
                        List.of(grant("a1", 0)), 0, 1),
                row("a pushed saturation holds the queue and its end dispatches", WIDE, GateView.NONE,
                        List.of(capacity(true, 0), admit("a1", 0), capacity(false, 5_000)),
                        List.of(queued("a1"), timer("a1", 30_000), left("a1"), grant("a1", 5_000)), 0, 1),
                row("a busy answer without a stream holds dispatch for the poll interval at most", WIDE, GateView.NONE,
                        List.of(admit("a1", 0), busy(5_000, 0), released(true, 0), admit("a2", 100), dispatch(499, GateView.NONE),
                                dispatch(500, GateView.NONE)),
                        List.of(grant("a1", 0), busyTimer(500), queued("a2"), timer("a2", 29_900), left("a2"), grant("a2", 400)),
                        0, 1),
                row("a busy answer with a stream holds for its retry-after; a shorter one changes nothing", WIDE,
                        GateView.NONE,
                        List.of(capacity(false, 0), busy(5_000, 0), busy(1_000, 10)),
                        List.of(busyTimer(5_000)), 0, 0),
                row("a capacity push ends a busy hold", WIDE, GateView.NONE,
                        List.of(capacity(false, 0), busy(5_000, 0), admit("a1", 10), capacity(false, 20)),
                        List.of(busyTimer(5_000), queued("a1"), timer("a1", 29_990), left("a1"), grant("a1", 10)), 0, 1),
                row("only maxRouting requests route at once; a Route's answer lets the next one in", TEN_ROUTING_TWO,
                        GateView.NONE,
                        List.of(admit("a1", 0), admit("a2", 0), admit("a3", 0), routed(5), released(true, 6)),
                        List.of(grant("a1", 0), grant("a2", 0), queued("a3"), timer("a3", 30_000), left("a3"), grant("a3", 5)),
                        0, 2),
                row("a limited flow asks the gate once at a time; its next waiter waits for the answer; the ask counts as wait", WIDE, A_LIMITED,
                        List.of(admit("a1", Priority.STANDARD, 30_000, 0, A_LIMITED), admit("a2", Priority.STANDARD, 30_000, 0,
                                A_LIMITED), answered("a1", true, 3), dispatch(3, A_LIMITED)),
                        List.of(ask("a1"), queued("a2"), timer("a2", 30_000), grantLeased("a1", 3), left("a2"), ask("a2")),
                        0, 2),
                row("a full answer gives the place back and queues the request with its own timer", WIDE, A_LIMITED,
                        List.of(admit("a1", Priority.STANDARD, 30_000, 0, A_LIMITED), answered("a1", false, 100)),
                        List.of(ask("a1"), queued("a1"), timer("a1", 29_900)), 1, 0),
                row("a full answer after the deadline rejects", WIDE, A_LIMITED,
                        List.of(admit("a1", Priority.STANDARD, 1_000, 0, A_LIMITED), answered("a1", false, 2_000)),
                        List.of(ask("a1"), reject("a1", new FlowRejection.QueueTimeout(ms(2_000)))), 0, 0),
                row("a client that left while the gate was asked gives the place back", WIDE, A_LIMITED,
                        List.of(admit("a1", Priority.STANDARD, 30_000, 0, A_LIMITED), cancel("a1"), answered("a1", true, 5)),
                        List.of(ask("a1"), cancelled("a1"), returnLease("a1")), 0, 0),
                row("a flow at its limit waits while other flows pass", WIDE, A_FULL,
                        List.of(admit("a1", Priority.STANDARD, 30_000, 0, A_FULL), admit("b1", Priority.STANDARD, 30_000, 0,
                                A_FULL), dispatch(1, A_FULL)),
                        List.of(queued("a1"), timer("a1", 30_000), queued("b1"), timer("b1", 30_000), left("b1"), grant("b1", 0)),
                        1, 1));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void eventsGiveTheEffects(Row row) {
        FlowState<String> state = new FlowState<>("m", row.limits(), 100, f -> 1, Duration.ofMillis(500), new HashSet<>());
        List<FlowEffect<String>> effects = new ArrayList<>();
        for (Event e : row.events()) {
            effects.addAll(e.apply().apply(state));
        }
        assertThat(effects).as(row.events().toString()).containsExactlyElementsOf(row.effects());
        assertThat(state.queued()).as("queued").isEqualTo(row.queued());
        assertThat(state.inFlight()).as("in flight").isEqualTo(row.inFlight());
        assertThat(state.routing()).as("routing ≤ in flight").isBetween(0, state.inFlight());
    }

    @Test
    void aGateAnswerDispatchesEveryModelAndOneAskPerFlowSpansModels() {
        FlowStates<String> states = new FlowStates<>(m -> WIDE, 100, f -> 1, Duration.ofMillis(500));
        FlowRequest onM = new FlowRequest("a1", "m", Priority.STANDARD, "a", 10, ms(30_000));
        FlowRequest onOther = new FlowRequest("a2", "other", Priority.STANDARD, "a", 10, ms(30_000));
        assertThat(states.model("m").admit("a1", onM, false, 0, A_LIMITED)).containsExactly(ask("a1"));
        assertThat(states.model("other").admit("a2", onOther, false, 0, A_LIMITED))
                .as("flow a already asks, for another model").containsExactly(queued("a2"), timer("a2", 30_000));
        assertThat(states.gateAnswered("m", "a1", true, ms(1), A_LIMITED)).containsExactly(
                new FlowStates.Effect<>("m", grantLeased("a1", 1)),
                new FlowStates.Effect<>("other", left("a2")),
                new FlowStates.Effect<>("other", ask("a2")));
    }
}
