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
        scheduler = new Scheduler(config, (p, e) -> { }, settings.enabled() ? new TierThread("bench-tiers") : null);
        if (scheduler.tiers() != null) {
            scheduler.tiers().setGuard(work -> {
                lock.lock();
                try {
                    work.run();
                    scheduler.flushEvents();
                } finally {
                    lock.unlock();
                }
            });
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        scheduler.closeTiers();
    }

    @Benchmark
    public int prefillStep() {
        int[] prompt = new int[2048];
        int base = ++next * 2048;
        for (int i = 0; i < prompt.length; i++) {
            prompt[i] = (base + i) % 100_000;
        }
        lock.lock();
        StepPlan plan;
        try {
            scheduler.submit(EngineRequest.of("r" + next, prompt, 1), SINK);
            plan = scheduler.schedule(next);
        } finally {
            lock.unlock();
        }
        lock.lock(); // the engine waits out the step between the two, without the lock
        try {
            scheduler.complete(plan);
            return plan.work().size();
        } finally {
            lock.unlock();
        }
    }
}
