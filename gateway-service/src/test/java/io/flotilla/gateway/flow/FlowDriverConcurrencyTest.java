package io.flotilla.gateway.flow;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import reactor.test.scheduler.VirtualTimeScheduler;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The driver from several threads at once: admits, releases from inside the grant callbacks (events
 * submitted while a drain runs) and routed calls from other threads. Whatever the interleaving, every
 * request is granted exactly once, nothing is left counted, and the in-flight limit is never exceeded.
 */
class FlowDriverConcurrencyTest {

    private final VirtualTimeScheduler time = VirtualTimeScheduler.create();

    @AfterEach
    void disposeTime() {
        time.dispose();
    }

    @Test
    void concurrentCallersSeeEveryRequestGrantedOnceAndNothingLeftCounted() throws InterruptedException {
        int threads = 4;
        int perThread = 500;
        FlowController c = new FlowController(m -> new FlowLimits(3, 100_000, 3, Duration.ofMinutes(10)), time,
                new FlowMetrics(new SimpleMeterRegistry(), t -> FlowMetrics.OTHER), 100, t -> 1, Duration.ofMillis(500));
        AtomicInteger granted = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        AtomicInteger maxSeen = new AtomicInteger();
        CountDownLatch done = new CountDownLatch(threads * perThread);
        List<Thread> callers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int thread = t;
            callers.add(new Thread(() -> {
                for (int i = 0; i < perThread; i++) {
                    FlowRequest r = new FlowRequest(thread + "-" + i, "m", Priority.values()[i % 3], "f" + (i % 5), 1 + i % 7,
                            c.nowNanos() + Duration.ofMinutes(10).toNanos());
                    c.admit(r, false).subscribe(slot -> {
                        granted.incrementAndGet();
                        maxSeen.accumulateAndGet(c.inFlight("m"), Math::max);
                        slot.routed();
                        slot.release();
                        slot.release(); // idempotent
                        done.countDown();
                    }, e -> {
                        failed.incrementAndGet();
                        done.countDown();
                    });
                }
            }));
        }
        callers.forEach(Thread::start);
        for (Thread t : callers) {
            t.join();
        }
        assertThat(done.await(60, TimeUnit.SECONDS)).as("every request answered").isTrue();
        assertThat(failed.get()).isZero();
        assertThat(granted.get()).isEqualTo(threads * perThread);
        assertThat(maxSeen.get()).isBetween(0, 3);
        assertThat(c.inFlight("m")).isZero();
        assertThat(c.queued("m")).isZero();
        assertThat(c.view()).extractingByKey("m").asInstanceOf(org.assertj.core.api.InstanceOfAssertFactories.MAP)
                .containsEntry("in_flight", 0).containsEntry("routing", 0).containsEntry("queued", 0);
    }
}
