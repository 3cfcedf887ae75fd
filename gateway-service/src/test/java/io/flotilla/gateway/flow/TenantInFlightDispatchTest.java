package io.flotilla.gateway.flow;

import io.flotilla.gateway.limits.LimitMetrics;
import io.flotilla.gateway.limits.TenantInFlight;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Per-flow in-flight limits inside flow control's dispatch, on virtual time: a flow at its limit waits
 * in the queue (never rejected), other flows pass it, a release dispatches its next waiter, and its
 * waiters still leave at their deadline or when cancelled.
 */
class TenantInFlightDispatchTest {

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final List<String> granted = new ArrayList<>();

    @AfterEach
    void disposeTime() {
        time.dispose();
    }

    /** Flow "a" may hold 2 places, "b" is unlimited; the model itself allows 10 in flight. */
    private FlowController controller(TenantGate gate) {
        return new FlowController(m -> new FlowLimits(10, 100, 10, Duration.ofSeconds(30)), time,
                new FlowMetrics(registry, t -> FlowMetrics.OTHER), 100, t -> 1, Duration.ofMillis(500), gate);
    }

    private TenantInFlight localGate() {
        return new TenantInFlight(f -> f.equals("a") ? 2 : 0, null, "t:", Duration.ofSeconds(30), Duration.ofMillis(250),
                "test", time, new LimitMetrics(registry));
    }

    private record Attempt(String id, AtomicReference<FlowSlot> slot, AtomicReference<Throwable> error, Disposable sub) {
    }

    private Attempt admit(FlowController c, String id, String flow, Duration timeout) {
        AtomicReference<FlowSlot> slot = new AtomicReference<>();
        AtomicReference<Throwable> error = new AtomicReference<>();
        FlowRequest r = new FlowRequest(id, "m", Priority.STANDARD, flow, 10, c.nowNanos() + timeout.toNanos());
        Disposable sub = c.admit(r, false).subscribe(s -> {
            granted.add(id);
            slot.set(s);
        }, error::set);
        return new Attempt(id, slot, error, sub);
    }

    @Test
    void aFlowAtItsLimitWaitsInTheQueueWhileOtherFlowsPassAndAReleaseDispatchesItsNextWaiter() {
        TenantInFlight gate = localGate();
        FlowController c = controller(gate);
        Attempt a1 = admit(c, "a1", "a", Duration.ofSeconds(30));
        Attempt a2 = admit(c, "a2", "a", Duration.ofSeconds(30));
        Attempt a3 = admit(c, "a3", "a", Duration.ofSeconds(30));
        Attempt b1 = admit(c, "b1", "b", Duration.ofSeconds(30));
        assertThat(granted).containsExactly("a1", "a2", "b1");
        assertThat(a3.error().get()).isNull(); // waiting, not rejected
        assertThat(c.queued("m")).isEqualTo(1);
        assertThat(gate.held("a")).isEqualTo(2);
        assertThat(gate.mayTry("a")).isFalse();

        a1.slot().get().release();
        assertThat(granted).containsExactly("a1", "a2", "b1", "a3");
        assertThat(c.queued("m")).isZero();
        assertThat(gate.held("a")).isEqualTo(2);
        a2.slot().get().release();
        a3.slot().get().release();
        b1.slot().get().release();
        assertThat(gate.held("a")).isZero();
        assertThat(c.inFlight("m")).isZero();
    }

    @Test
    void theLimitCountsAcrossModels() {
        TenantInFlight gate = localGate();
        FlowController c = controller(gate);
        admit(c, "a1", "a", Duration.ofSeconds(30));
        AtomicReference<FlowSlot> other = new AtomicReference<>();
        c.admit(new FlowRequest("x1", "other-model", Priority.STANDARD, "a", 10, c.nowNanos() + Duration.ofSeconds(30).toNanos()),
                false).subscribe(s -> {
                    granted.add("x1");
                    other.set(s);
                });
        Attempt a2 = admit(c, "a2", "a", Duration.ofSeconds(30));
        assertThat(granted).containsExactly("a1", "x1");
        other.get().release(); // a place frees on the other model: this model's waiter takes it
        assertThat(granted).containsExactly("a1", "x1", "a2");
        assertThat(a2.slot().get()).isNotNull();
    }

    @Test
    void aWaiterOfAFullFlowStillLeavesAtItsDeadlineAndWhenCancelled() {
        TenantInFlight gate = localGate();
        FlowController c = controller(gate);
        admit(c, "a1", "a", Duration.ofSeconds(30));
        admit(c, "a2", "a", Duration.ofSeconds(30));
        Attempt late = admit(c, "a3", "a", Duration.ofSeconds(1));
        Attempt gone = admit(c, "a4", "a", Duration.ofSeconds(30));
        time.advanceTimeBy(Duration.ofMillis(1001));
        assertThat(late.error().get()).isInstanceOfSatisfying(FlowRejected.class,
                r -> assertThat(r.reason()).isEqualTo(FlowRejected.Reason.QUEUE_TIMEOUT));
        gone.sub().dispose();
        assertThat(c.queued("m")).isZero();
        assertThat(registry.find("flotilla.gateway.flow.requests").tag("result", "cancelled").counter().count()).isEqualTo(1);
    }

    /** A gate that answers later, as the shared store does: the controller asks once per flow at a time. */
    private static final class SlowGate implements TenantGate {
        final List<CompletableFuture<Lease>> asks = new ArrayList<>();
        Consumer<String> listener;
        boolean open = true;

        @Override
        public boolean limited(String flow) {
            return true;
        }

        @Override
        public boolean mayTry(String flow) {
            return open;
        }

        @Override
        public CompletionStage<Lease> acquire(String flow) {
            CompletableFuture<Lease> f = new CompletableFuture<>();
            asks.add(f);
            return f;
        }

        @Override
        public void onMayTry(Consumer<String> listener) {
            this.listener = listener;
        }
    }

    @Test
    void anAnsweredFullFlowGoesBackToTheQueueWithItsDeadlineAndAClientThatLeftWhileAskingGivesItsLeaseBack() {
        SlowGate gate = new SlowGate();
        FlowController c = controller(gate);
        Attempt a1 = admit(c, "a1", "a", Duration.ofSeconds(30));
        Attempt a2 = admit(c, "a2", "a", Duration.ofSeconds(30));
        assertThat(gate.asks).hasSize(1); // one ask per flow at a time
        assertThat(c.inFlight("m")).isEqualTo(1); // the asking waiter's place is reserved

        gate.open = false;
        gate.asks.get(0).complete(null); // the store says: full
        assertThat(granted).isEmpty();
        assertThat(c.queued("m")).isEqualTo(2);
        assertThat(c.inFlight("m")).isZero();
        assertThat(a1.error().get()).isNull();

        gate.open = true;
        gate.listener.accept("a"); // a release notice
        assertThat(gate.asks).hasSize(2);
        boolean[] released = {false};
        a1.sub().dispose(); // the client leaves while the gate is asked
        gate.asks.get(1).complete(() -> released[0] = true);
        assertThat(released[0]).isTrue();
        assertThat(granted).isEmpty();
        assertThat(gate.asks).hasSize(3); // a2's turn
        gate.asks.get(2).complete(TenantGate.Lease.NONE);
        assertThat(granted).containsExactly("a2");
        assertThat(a2.slot().get()).isNotNull();
        assertThat(c.view()).extractingByKey("m").asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                .containsEntry("in_flight", 1);
    }
}
