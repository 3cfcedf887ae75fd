package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.EngineRequest;
import io.flotilla.worker.engine.TokenSink;
import io.flotilla.worker.kvbm.TierSettings;
import io.flotilla.worker.kvbm.TierThread;
import io.flotilla.protocol.v1.FinishReason;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.runner.IterationType;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The engine's step thread with the lower tiers off and on: each operation schedules and completes
 * one step that prefills a fresh 2,048-token prompt (128 new 16 KiB blocks registered, each queued for
 * a copy to host memory when tiers are on, the pool evicting as it fills). With tiers on a real tier
 * thread copies concurrently and publishes under the scheduler's lock (taken here like the engine does),
 * so any copy on the step thread, or lock contention, would show as a longer step. The score is the
 * step thread's time per step (schedule + complete), not counting the simulated step duration.
 *
 * <p>The score is wall time. To tell waiting from sharing the CPU, every measured iteration also prints
 * one {@code step-probe} line, per step in µs: the step thread's CPU time (ThreadMXBean) and its Linux
 * scheduler counters ({@link SchedStat}: on a CPU, runnable but waiting for one, the rest asleep), the
 * time it waited to take the engine lock (and how many waits took over 20 µs), the tier thread's CPU
 * time and its lock holds, GC time, and the offloads skipped by the backpressure limit; a
 * {@code step-probe summary} line averages the measured iterations.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class StepTimeBenchmark {

    @Param({"off", "host", "host+disk"})
    String tiers;

    private Scheduler scheduler;
    /** Fair, like a step thread that sleeps between steps: the tier thread gets its turn to publish copies. */
    private final java.util.concurrent.locks.ReentrantLock lock = new java.util.concurrent.locks.ReentrantLock(true);
    private int next;
    private Path dir;
    private final StepProbe probe = new StepProbe();

    private static final TokenSink SINK = new TokenSink() {
        @Override
        public void onTokens(int[] tokens) {
        }

        @Override
        public void onFinish(FinishReason reason, int promptTokens, int cachedTokens, int completionTokens) {
        }

        @Override
        public void onError(Throwable error) {
        }
    };

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        dir = Files.createTempDirectory("kvbm-step-bench");
        TierSettings settings = switch (tiers) {
            case "host" -> TierSettings.of(256L << 20, dir, 0);
            case "host+disk" -> TierSettings.of(64L << 20, dir, 512L << 20);
            default -> TierSettings.OFF;
        };
        SimEngineConfig config = SimEngineConfig.builder().totalBlocks(4096).maxBatchTokens(4096).tiers(settings).build();
        // the tiers' owner as the engine is one: the benchmark's lock, timed
        scheduler = new Scheduler(config, (p, e) -> { }, null, settings.enabled() ? new TierThread("bench-tiers") : null,
                change -> {
                    long asked = System.nanoTime();
                    lock.lock();
                    long got = System.nanoTime();
                    try {
                        change.run();
                        scheduler.flushEvents();
                    } finally {
                        probe.tierHeld(got - asked, System.nanoTime() - got);
                        lock.unlock();
                    }
                });
        probe.attach(scheduler.tiers() == null ? null : "bench-tiers");
    }

    @Setup(Level.Iteration)
    public void startIteration() {
        probe.start(scheduler.tiers());
    }

    @TearDown(Level.Iteration)
    public void endIteration(IterationParams iteration) {
        probe.end(tiers, scheduler.tiers(), iteration.getType() == IterationType.MEASUREMENT);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws java.io.IOException {
        probe.summary(tiers);
        scheduler.closeTiers();
        try (java.util.stream.Stream<Path> files = Files.walk(dir)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    private void lock() {
        long asked = System.nanoTime();
        lock.lock();
        probe.stepWaited(System.nanoTime() - asked);
    }

    @Benchmark
    public int prefillStep() {
        int[] prompt = new int[2048];
        int base = ++next * 2048;
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = (base + i) % 100_000;
        }
        lock();
        StepPlan plan;
        try {
            scheduler.submit(EngineRequest.of("r" + next, prompt, 1), SINK);
            plan = scheduler.schedule(next);
        } finally {
            lock.unlock();
        }
        lock(); // the engine waits out the step between the two, without the lock
        try {
            scheduler.complete(plan);
            probe.steps++;
            return plan.work().size();
        } finally {
            lock.unlock();
        }
    }
}
