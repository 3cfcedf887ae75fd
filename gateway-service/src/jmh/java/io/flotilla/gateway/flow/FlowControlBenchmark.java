package io.flotilla.gateway.flow;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Cost of flow control on the request path (targets: an empty queue adds ≤ 50 µs per
 * request; dispatch after capacity returns ≤ 5 ms p99).
 *
 * <ul>
 *   <li>{@code emptyQueue}: one request through an unsaturated model — cost estimate of a 512-token
 *       prompt (32 block hashes), admit, routed, release — what every request pays when nothing waits.</li>
 *   <li>{@code dispatchAfterCapacityReturns}: 1,000 requests wait behind a saturated pool; the router's
 *       push says capacity returned; time until the first waiter holds its slot (sample mode: p99).</li>
 * </ul>
 * Run: {@code ./mvnw -pl gateway-service -am -Pjmh test-compile exec:exec -Djmh.args="FlowControlBenchmark -f 1"}
 */
@State(Scope.Thread)
@Fork(value = 1, jvmArgsAppend = {"-Xmx512m"})
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
public class FlowControlBenchmark {

    private Scheduler timer;
    private FlowController flow;
    private PrefixMemory prefixes;
    private long[] hashes;
    private final SplittableRandom random = new SplittableRandom(1);

    @Setup(Level.Trial)
    public void setUp() {
        timer = Schedulers.newParallel("bench-flow-timer", 1);
        flow = new FlowController(m -> new FlowLimits(1_000_000, 100_000, 8, Duration.ofSeconds(30)), timer,
                new FlowMetrics(new SimpleMeterRegistry(), t -> FlowMetrics.OTHER), 4096, t -> 1, Duration.ofMillis(500));
        prefixes = new PrefixMemory(262_144);
        hashes = new long[32];
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        timer.dispose();
    }

    @Benchmark
    @BenchmarkMode(Mode.AverageTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public void emptyQueue(Blackhole bh) {
        for (int i = 0; i < hashes.length; i++) {
            hashes[i] = random.nextLong();
        }
        long cost = prefixes.cost(hashes, 16, 512, 128);
        FlowRequest r = new FlowRequest("r", "m", Priority.STANDARD, "tenant", cost, flow.nowNanos() + 30_000_000_000L);
        AtomicReference<FlowSlot> slot = new AtomicReference<>();
        flow.admit(r, false).subscribe(slot::set);
        FlowSlot s = slot.get();
        s.routed();
        s.release();
        bh.consume(s);
    }

    /** A model saturated by the router, with 1,000 waiters; each invocation frees it once and re-saturates. */
    @State(Scope.Thread)
    public static class Saturated {
        Scheduler timer;
        FlowController flow;
        final AtomicReference<FlowSlot> granted = new AtomicReference<>();
        long seq;

        @Setup(Level.Trial)
        public void setUp() {
            timer = Schedulers.newParallel("bench-flow-timer", 1);
            flow = new FlowController(m -> new FlowLimits(1_000_000, 100_000, 1, Duration.ofMinutes(10)), timer,
                    new FlowMetrics(new SimpleMeterRegistry(), t -> FlowMetrics.OTHER), 4096, t -> 1, Duration.ofMillis(500));
            flow.capacity("m", true);
            for (int i = 0; i < 1000; i++) {
                enqueue();
            }
        }

        void enqueue() {
            FlowRequest r = new FlowRequest("w" + seq, "m", Priority.values()[(int) (seq % 3)], "t" + (seq % 10), 1 + seq % 5000,
                    flow.nowNanos() + Duration.ofMinutes(10).toNanos());
            seq++;
            flow.admit(r, false).subscribe(granted::set);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            timer.dispose();
        }
    }

    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OutputTimeUnit(TimeUnit.MICROSECONDS)
    public FlowSlot dispatchAfterCapacityReturns(Saturated s) {
        s.granted.set(null);
        s.flow.capacity("m", false); // the push: a waiter is released synchronously, on the pushing thread
        FlowSlot slot = s.granted.get();
        s.flow.capacity("m", true);
        slot.release();
        s.enqueue(); // keep 1,000 waiting
        return slot;
    }
}
