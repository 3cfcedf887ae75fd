package io.flotilla.gateway.flow;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

/** Flow control on virtual time: bands, fairness, EDF, deadlines, cancellation, displacement, saturation. */
class FlowControllerTest {

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    /** Dispatch order: request ids as their slots were granted. */
    private final List<String> granted = new ArrayList<>();

    @AfterEach
    void disposeTime() {
        time.dispose();
    }

    private FlowController controller(int maxInFlight, int maxQueued) {
        return new FlowController(m -> new FlowLimits(maxInFlight, maxQueued, maxInFlight, Duration.ofSeconds(30)), time,
                new FlowMetrics(registry, t -> t.equals("a") || t.equals("b") ? t : FlowMetrics.OTHER), 100, t -> 1,
                Duration.ofMillis(500));
    }

    /** The outcome of one admit() subscription. */
    private final class Attempt {
        final String id;
        final AtomicReference<FlowSlot> slot = new AtomicReference<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        Disposable subscription;

        Attempt(String id) {
            this.id = id;
        }

        FlowRejected.Reason rejection() {
            return error.get() instanceof FlowRejected r ? r.reason() : null;
        }

        void release() {
            slot.get().release();
        }
    }

    private Attempt admit(FlowController c, String id, Priority p, String flow, long cost, Duration timeout) {
        Attempt a = new Attempt(id);
        FlowRequest r = new FlowRequest(id, "m", p, flow, cost, c.nowNanos() + timeout.toNanos());
        a.subscription = c.admit(r, false).subscribe(s -> {
            granted.add(id);
            a.slot.set(s);
        }, a.error::set);
        return a;
    }

    private Attempt admit(FlowController c, String id, Priority p) {
        return admit(c, id, p, "a", 10, Duration.ofSeconds(30));
    }

    /** Releases the slot of whatever was granted last, {@code n} times: one dispatch per release. */
    private void drain(Map<String, Attempt> byId, int n) {
        for (int i = 0; i < n; i++) {
            byId.get(granted.get(granted.size() - 1)).release();
        }
    }

    @Test
    void bandsAreStrictWhateverTheArrivalOrder() {
        FlowController c = controller(1, 10);
        Map<String, Attempt> all = new HashMap<>();
        all.put("running", admit(c, "running", Priority.BATCH));
        for (String id : List.of("batch-1", "standard-1", "batch-2", "interactive-1", "standard-2", "interactive-2")) {
            all.put(id, admit(c, id, Priority.parse(id.substring(0, id.indexOf('-')))));
        }
        assertThat(c.queued("m")).isEqualTo(6);
        drain(all, 6);
        assertThat(granted).containsExactly("running", "interactive-1", "interactive-2", "standard-1", "standard-2",
                "batch-1", "batch-2");
    }

    @Test
    void twoBackloggedTenantsWithTenToOneLoadEachGetAtLeast45PercentOfDispatches() {
        FlowController c = controller(1, 10_000);
        Map<String, Attempt> all = new HashMap<>();
        all.put("running", admit(c, "running", Priority.STANDARD));
        SplittableRandom random = new SplittableRandom(7);
        int heavy = 0;
        int light = 0;
        for (int i = 0; i < 1100; i++) { // arrivals 10:1, interleaved at random
            boolean isHeavy = random.nextInt(11) < 10;
            String id = (isHeavy ? "a-" + heavy++ : "b-" + light++);
            all.put(id, admit(c, id, Priority.STANDARD, isHeavy ? "a" : "b", 50 + random.nextInt(100), Duration.ofMinutes(5)));
        }
        drain(all, 2 * light - 10); // both flows stay backlogged throughout
        List<String> dispatched = granted.subList(1, granted.size());
        long a = dispatched.stream().filter(id -> id.startsWith("a-")).count();
        long b = dispatched.size() - a;
        assertThat((double) a / dispatched.size()).isGreaterThanOrEqualTo(0.45);
        assertThat((double) b / dispatched.size()).isGreaterThanOrEqualTo(0.45);
    }

    @Test
    void costDecidesTheShareNotTheCount() {
        FlowController c = controller(1, 1000);
        Map<String, Attempt> all = new HashMap<>();
        all.put("running", admit(c, "running", Priority.STANDARD));
        for (int i = 0; i < 100; i++) {
            all.put("a-" + i, admit(c, "a-" + i, Priority.STANDARD, "a", 300, Duration.ofMinutes(5)));
            all.put("b-" + i, admit(c, "b-" + i, Priority.STANDARD, "b", 100, Duration.ofMinutes(5)));
        }
        drain(all, 80);
        long a = granted.stream().filter(id -> id.startsWith("a-")).count();
        long b = granted.stream().filter(id -> id.startsWith("b-")).count();
        assertThat(b).as("three times cheaper requests, three times as many dispatches").isBetween(3 * a - 3, 3 * a + 3);
    }

    @Test
    void insideAFlowTheEarliestDeadlineGoesFirst() {
        FlowController c = controller(1, 10);
        Map<String, Attempt> all = new HashMap<>();
        all.put("running", admit(c, "running", Priority.STANDARD));
        all.put("30s", admit(c, "30s", Priority.STANDARD, "a", 10, Duration.ofSeconds(30)));
        all.put("5s", admit(c, "5s", Priority.STANDARD, "a", 10, Duration.ofSeconds(5)));
        all.put("10s", admit(c, "10s", Priority.STANDARD, "a", 10, Duration.ofSeconds(10)));
        drain(all, 3);
        assertThat(granted).containsExactly("running", "5s", "10s", "30s");
    }

    @Test
    void aWaiterWhoseDeadlinePassesLeavesWithQueueTimeout() {
        FlowController c = controller(1, 10);
        Attempt running = admit(c, "running", Priority.STANDARD);
        Attempt waiting = admit(c, "waiting", Priority.STANDARD, "a", 10, Duration.ofSeconds(2));
        time.advanceTimeBy(Duration.ofMillis(1999));
        assertThat(waiting.error.get()).isNull();
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(waiting.rejection()).isEqualTo(FlowRejected.Reason.QUEUE_TIMEOUT);
        assertThat(c.queued("m")).isZero();
        running.release();
        assertThat(waiting.slot.get()).isNull();
        assertThat(c.inFlight("m")).isZero();
        assertThat(registry.get("flotilla.gateway.flow.requests").tag("result", "expired").counter().count()).isEqualTo(1);
    }

    @Test
    void aZeroTimeoutNeverWaits() {
        FlowController c = controller(1, 10);
        admit(c, "running", Priority.STANDARD);
        Attempt noWait = admit(c, "no-wait", Priority.STANDARD, "a", 10, Duration.ZERO);
        assertThat(noWait.rejection()).isEqualTo(FlowRejected.Reason.QUEUE_TIMEOUT);
        assertThat(c.queued("m")).isZero();
    }

    @Test
    void aClientThatGoesAwayLeavesTheQueueAtOnce() {
        FlowController c = controller(1, 10);
        Attempt running = admit(c, "running", Priority.STANDARD);
        Attempt gone = admit(c, "gone", Priority.STANDARD);
        Attempt next = admit(c, "next", Priority.STANDARD);
        gone.subscription.dispose();
        assertThat(c.queued("m")).isEqualTo(1);
        running.release();
        assertThat(granted).containsExactly("running", "next");
        assertThat(gone.slot.get()).isNull();
        assertThat(registry.get("flotilla.gateway.flow.requests").tag("result", "cancelled").counter().count()).isEqualTo(1);
    }

    @Test
    void aHigherBandDisplacesTheLowestBandsLatestDeadlineFromAFullQueue() {
        FlowController c = controller(1, 3);
        admit(c, "running", Priority.STANDARD);
        Attempt batchSoon = admit(c, "batch-soon", Priority.BATCH, "a", 10, Duration.ofSeconds(10));
        Attempt batchLate = admit(c, "batch-late", Priority.BATCH, "b", 10, Duration.ofSeconds(60));
        Attempt standard = admit(c, "standard", Priority.STANDARD);
        Attempt interactive = admit(c, "interactive", Priority.INTERACTIVE);
        assertThat(batchLate.rejection()).isEqualTo(FlowRejected.Reason.DISPLACED);
        assertThat(batchLate.error.get().getMessage()).contains("interactive", "batch");
        assertThat(batchSoon.error.get()).isNull();
        assertThat(c.queued("m")).isEqualTo(3);

        Attempt anotherBatch = admit(c, "another-batch", Priority.BATCH);
        assertThat(anotherBatch.rejection()).as("nothing below batch to displace").isEqualTo(FlowRejected.Reason.QUEUE_FULL);
        admit(c, "interactive-2", Priority.INTERACTIVE);
        assertThat(batchSoon.rejection()).isEqualTo(FlowRejected.Reason.DISPLACED);
        Attempt standard2 = admit(c, "standard-2", Priority.STANDARD);
        assertThat(standard2.rejection()).as("only lower bands are displaced").isEqualTo(FlowRejected.Reason.QUEUE_FULL);
        assertThat(standard.error.get()).isNull();
        assertThat(interactive.error.get()).isNull();
    }

    @Test
    void aPushedSaturationHoldsTheQueueAndItsEndReleasesAWaiterAtOnce() {
        FlowController c = controller(10, 10);
        c.capacity("m", true);
        Attempt waiting = admit(c, "waiting", Priority.STANDARD);
        time.advanceTimeBy(Duration.ofSeconds(5));
        assertThat(waiting.slot.get()).as("no poll while a stream says saturated").isNull();
        c.capacity("m", false);
        assertThat(granted).containsExactly("waiting");
    }

    @Test
    void aBusyAnswerHoldsDispatchUntilThePollWithoutAStream() {
        FlowController c = controller(10, 10);
        Attempt first = admit(c, "first", Priority.STANDARD);
        first.slot.get().busy(Duration.ofSeconds(5));
        Attempt again = new Attempt("first");
        c.admit(new FlowRequest("first", "m", Priority.STANDARD, "a", 10, c.nowNanos() + Duration.ofSeconds(30).toNanos()), true)
                .subscribe(again.slot::set, again.error::set);
        assertThat(again.slot.get()).isNull();
        time.advanceTimeBy(Duration.ofMillis(499));
        assertThat(again.slot.get()).isNull();
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(again.slot.get()).as("the poll interval caps the hold").isNotNull();
        assertThat(c.inFlight("m")).isEqualTo(1);
    }

    @Test
    void aReadmittedRequestEntersAFullQueue() {
        FlowController c = controller(1, 1);
        admit(c, "running", Priority.STANDARD);
        admit(c, "waiting", Priority.STANDARD);
        Attempt back = new Attempt("back");
        c.admit(new FlowRequest("back", "m", Priority.STANDARD, "a", 10, c.nowNanos() + 1_000_000_000L), true)
                .subscribe(back.slot::set, back.error::set);
        assertThat(back.error.get()).isNull();
        assertThat(c.queued("m")).isEqualTo(2);
    }

    @Test
    void onlyMaxRoutingRequestsRouteAtOnce() {
        FlowController c = new FlowController(m -> new FlowLimits(100, 100, 2, Duration.ofSeconds(30)), time,
                new FlowMetrics(registry, t -> FlowMetrics.OTHER), 100, t -> 1, Duration.ofMillis(500));
        List<Attempt> all = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            all.add(admit(c, "r" + i, Priority.STANDARD));
        }
        assertThat(granted).containsExactly("r0", "r1");
        all.get(0).slot.get().routed();
        assertThat(granted).containsExactly("r0", "r1", "r2");
        all.get(1).release(); // released before its Route answered: frees both counts
        assertThat(granted).containsExactly("r0", "r1", "r2", "r3");
    }

    /**
     * Seeded simulation: random arrivals, releases, cancels and time steps. After every step the slots
     * the controller counts are exactly those granted and not released, never more than maxInFlight,
     * and no attempt was both granted and failed.
     */
    @Test
    void randomSchedulesKeepTheInvariants() {
        for (long seed = 1; seed <= 20; seed++) {
            SplittableRandom random = new SplittableRandom(seed);
            FlowController c = controller(3, 8);
            List<Attempt> live = new ArrayList<>();
            java.util.Set<Attempt> released = new java.util.HashSet<>();
            for (int step = 0; step < 400; step++) {
                int op = random.nextInt(10);
                if (op < 5) {
                    Priority p = Priority.values()[random.nextInt(3)];
                    live.add(admit(c, "s" + seed + "-" + step, p, random.nextBoolean() ? "a" : "b", 1 + random.nextInt(500),
                            Duration.ofMillis(100 + random.nextInt(3000))));
                } else if (op < 8) {
                    List<Attempt> holding = live.stream().filter(a -> a.slot.get() != null && !released.contains(a)).toList();
                    if (!holding.isEmpty()) {
                        Attempt a = holding.get(random.nextInt(holding.size()));
                        a.release();
                        a.release(); // idempotent
                        released.add(a);
                    }
                } else if (op < 9 && !live.isEmpty()) {
                    Attempt a = live.get(random.nextInt(live.size()));
                    if (a.slot.get() == null) {
                        a.subscription.dispose();
                    }
                } else {
                    time.advanceTimeBy(Duration.ofMillis(random.nextInt(1000)));
                }
                long holding = live.stream().filter(a -> a.slot.get() != null && !released.contains(a)).count();
                assertThat(c.inFlight("m")).isEqualTo((int) holding).isBetween(0, 3);
                for (Attempt a : live) {
                    assertThat(a.slot.get() != null && a.error.get() != null).as("granted and failed").isFalse();
                }
            }
        }
    }
}
