package io.flotilla.gateway.admission;

import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.core.Disposable;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;

class AdmissionControlTest {

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();

    @AfterEach
    void disposeTime() {
        time.dispose();
    }

    private AdmissionControl control(int inFlight, int queued, Duration timeout) {
        return new AdmissionControl(m -> new AdmissionLimits(inFlight, queued, timeout), time);
    }

    /** The outcome of one admit() subscription. */
    private static final class Attempt {
        final AtomicReference<AdmissionControl.Permit> permit = new AtomicReference<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        Disposable subscription;

        static Attempt of(AdmissionControl control, String model) {
            Attempt a = new Attempt();
            a.subscription = control.admit(model).subscribe(a.permit::set, a.error::set);
            return a;
        }

        AdmissionRejected.Reason rejection() {
            return error.get() instanceof AdmissionRejected r ? r.reason() : null;
        }
    }

    @Test
    void grantsUpToTheLimitThenQueuesThenRejects() {
        AdmissionControl c = control(2, 1, Duration.ofSeconds(5));
        Attempt a = Attempt.of(c, "m");
        Attempt b = Attempt.of(c, "m");
        Attempt queued = Attempt.of(c, "m");
        Attempt rejected = Attempt.of(c, "m");

        assertThat(a.permit.get()).isNotNull();
        assertThat(b.permit.get()).isNotNull();
        assertThat(queued.permit.get()).isNull();
        assertThat(queued.error.get()).isNull();
        assertThat(rejected.rejection()).isEqualTo(AdmissionRejected.Reason.QUEUE_FULL);
        assertThat(c.inFlight("m")).isEqualTo(2);
        assertThat(c.queued("m")).isEqualTo(1);
        assertThat(c.inFlight("other")).isZero();
    }

    @Test
    void aReleasedSlotGoesToTheOldestWaiter() {
        AdmissionControl c = control(1, 2, Duration.ofSeconds(5));
        Attempt running = Attempt.of(c, "m");
        Attempt first = Attempt.of(c, "m");
        Attempt second = Attempt.of(c, "m");

        running.permit.get().release();
        assertThat(first.permit.get()).isNotNull();
        assertThat(second.permit.get()).isNull();
        assertThat(c.inFlight("m")).isEqualTo(1);

        running.permit.get().release(); // a second release of the same permit changes nothing
        assertThat(second.permit.get()).isNull();

        first.permit.get().release();
        second.permit.get().release();
        assertThat(c.inFlight("m")).isZero();
        assertThat(c.queued("m")).isZero();
    }

    @Test
    void aWaitPastTheQueueTimeoutIsRejected() {
        AdmissionControl c = control(1, 1, Duration.ofSeconds(5));
        Attempt running = Attempt.of(c, "m");
        Attempt waiting = Attempt.of(c, "m");

        time.advanceTimeBy(Duration.ofMillis(4999));
        assertThat(waiting.error.get()).isNull();
        time.advanceTimeBy(Duration.ofMillis(1));
        assertThat(waiting.rejection()).isEqualTo(AdmissionRejected.Reason.QUEUE_TIMEOUT);
        assertThat(c.queued("m")).isZero();

        running.permit.get().release();
        assertThat(c.inFlight("m")).isZero();
    }

    @Test
    void aGrantedWaiterIsNotTimedOutLater() {
        AdmissionControl c = control(1, 1, Duration.ofSeconds(5));
        Attempt running = Attempt.of(c, "m");
        Attempt waiting = Attempt.of(c, "m");
        running.permit.get().release();
        time.advanceTimeBy(Duration.ofSeconds(10));
        assertThat(waiting.permit.get()).isNotNull();
        assertThat(waiting.error.get()).isNull();
        assertThat(c.inFlight("m")).isEqualTo(1);
    }

    @Test
    void aCancelledWaiterLeavesTheQueue() {
        AdmissionControl c = control(1, 1, Duration.ofSeconds(5));
        Attempt running = Attempt.of(c, "m");
        Attempt waiting = Attempt.of(c, "m");
        waiting.subscription.dispose();
        assertThat(c.queued("m")).isZero();

        Attempt next = Attempt.of(c, "m");
        assertThat(next.error.get()).isNull();
        running.permit.get().release();
        assertThat(next.permit.get()).isNotNull();
        assertThat(waiting.permit.get()).isNull();
    }

    /**
     * Invariant under any interleaving of admits, releases, cancels and time: no model ever has more
     * than maxInFlight permits out, and every permit handed out is counted exactly once.
     */
    @Property(tries = 200, seed = "7")
    void neverMoreThanTheLimitInFlight(@ForAll @Size(min = 1, max = 80) List<@IntRange(min = 0, max = 3) Integer> ops) {
        VirtualTimeScheduler clock = VirtualTimeScheduler.create();
        try {
            AdmissionControl c = new AdmissionControl(m -> new AdmissionLimits(2, 2, Duration.ofSeconds(1)), clock);
            List<Attempt> attempts = new ArrayList<>();
            List<AdmissionControl.Permit> held = new ArrayList<>();
            for (int op : ops) {
                switch (op) {
                    case 0 -> attempts.add(Attempt.of(c, "m"));
                    case 1 -> { // release the oldest permit held
                        collect(attempts, held);
                        if (!held.isEmpty()) {
                            held.remove(0).release();
                        }
                    }
                    case 2 -> { // a waiting client goes away
                        attempts.stream().filter(a -> a.permit.get() == null && a.error.get() == null).findFirst()
                                .ifPresent(a -> {
                                    a.subscription.dispose();
                                    attempts.remove(a);
                                });
                    }
                    default -> clock.advanceTimeBy(Duration.ofMillis(400));
                }
                collect(attempts, held);
                assertThat(c.inFlight("m")).isLessThanOrEqualTo(2).isEqualTo(held.size());
                assertThat(c.queued("m")).isLessThanOrEqualTo(2);
            }
        } finally {
            clock.dispose();
        }
    }

    private static void collect(List<Attempt> attempts, List<AdmissionControl.Permit> held) {
        for (var it = attempts.iterator(); it.hasNext(); ) {
            Attempt a = it.next();
            if (a.permit.get() != null) {
                held.add(a.permit.get());
                it.remove();
            } else if (a.error.get() != null) {
                it.remove();
            }
        }
    }
}
