package io.flotilla.worker.engine.sim;

import io.flotilla.protocol.v1.KvTier;
import io.flotilla.worker.kvbm.LowerTiers;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Where {@link StepTimeBenchmark}'s step time goes, per measured iteration: the step thread's CPU time
 * against its wall time, its waits for the engine lock, the tier thread's CPU and lock holds, GC. The
 * step thread calls everything but {@link #tierHeld}, which the tier thread calls under the lock.
 */
final class StepProbe {

    private static final String STEP_THREAD = "kvbm-step";
    private static final long LONG_WAIT_NANOS = 20_000;

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final AtomicLong tierLockWaitNanos = new AtomicLong();
    private final AtomicLong tierHoldNanos = new AtomicLong();
    private final AtomicLong tierHolds = new AtomicLong();
    private SchedStat stepSched;
    private SchedStat tierSched;
    private long tierThreadId = -1;

    long steps;
    private long stepLockWaitNanos;
    private long longWaits;

    private long[] start;
    private final double[] sums = new double[Figure.values().length];
    private int measured;

    /** The figures, per step. */
    private enum Figure {
        WALL_US, CPU_US, USER_US, ON_CPU_US, RUN_QUEUE_US, ASLEEP_US, LOCK_WAIT_US, LONG_WAITS,
        TIER_CPU_US, TIER_RUN_QUEUE_US, TIER_HOLD_US, TIER_HOLDS, TIER_LOCK_WAIT_US, GC_US, SKIPPED
    }

    /** On the step thread, once: names it so its scheduler counters can be found; finds the tier thread's. */
    void attach(String tierThreadName) {
        Thread.currentThread().setName(STEP_THREAD);
        stepSched = SchedStat.ofThreadNamed(STEP_THREAD);
        tierSched = SchedStat.ofThreadNamed(tierThreadName == null ? "" : tierThreadName);
        if (tierThreadName != null) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals(tierThreadName)) {
                    tierThreadId = t.getId();
                }
            }
        }
    }

    void stepWaited(long nanos) {
        stepLockWaitNanos += nanos;
        if (nanos > LONG_WAIT_NANOS) {
            longWaits++;
        }
    }

    void tierHeld(long waitNanos, long holdNanos) {
        tierLockWaitNanos.addAndGet(waitNanos);
        tierHoldNanos.addAndGet(holdNanos);
        tierHolds.incrementAndGet();
    }

    void start(LowerTiers tiers) {
        start = snapshot(tiers);
    }

    void end(String label, LowerTiers tiers, boolean measurement) {
        long[] now = snapshot(tiers);
        double n = Math.max(1, now[Raw.STEPS.ordinal()] - start[Raw.STEPS.ordinal()]);
        double[] f = new double[Figure.values().length];
        f[Figure.WALL_US.ordinal()] = us(now, Raw.WALL) / n;
        f[Figure.CPU_US.ordinal()] = us(now, Raw.CPU) / n;
        f[Figure.USER_US.ordinal()] = us(now, Raw.USER) / n;
        f[Figure.ON_CPU_US.ordinal()] = us(now, Raw.SCHED_RUN) / n;
        f[Figure.RUN_QUEUE_US.ordinal()] = us(now, Raw.SCHED_WAIT) / n;
        f[Figure.ASLEEP_US.ordinal()] = (us(now, Raw.WALL) - us(now, Raw.SCHED_RUN) - us(now, Raw.SCHED_WAIT)) / n;
        f[Figure.LOCK_WAIT_US.ordinal()] = us(now, Raw.LOCK_WAIT) / n;
        f[Figure.LONG_WAITS.ordinal()] = delta(now, Raw.LONG_WAITS) / n;
        f[Figure.TIER_CPU_US.ordinal()] = us(now, Raw.TIER_CPU) / n;
        f[Figure.TIER_RUN_QUEUE_US.ordinal()] = us(now, Raw.TIER_SCHED_WAIT) / n;
        f[Figure.TIER_HOLD_US.ordinal()] = us(now, Raw.TIER_HOLD) / n;
        f[Figure.TIER_HOLDS.ordinal()] = delta(now, Raw.TIER_HOLDS) / n;
        f[Figure.TIER_LOCK_WAIT_US.ordinal()] = us(now, Raw.TIER_LOCK_WAIT) / n;
        f[Figure.GC_US.ordinal()] = delta(now, Raw.GC_MS) * 1000.0 / n;
        f[Figure.SKIPPED.ordinal()] = delta(now, Raw.SKIPPED) / n;
        if (measurement) {
            measured++;
            for (int i = 0; i < f.length; i++) {
                sums[i] += f[i];
            }
        }
        System.out.println("step-probe " + label + (measurement ? "" : " (warm-up)") + " steps=" + (long) n
                + format(f));
    }

    void summary(String label) {
        if (measured == 0) {
            return;
        }
        double[] mean = new double[sums.length];
        for (int i = 0; i < sums.length; i++) {
            mean[i] = sums[i] / measured;
        }
        System.out.println("step-probe summary " + label + " iterations=" + measured + format(mean));
    }

    private static String format(double[] f) {
        StringBuilder b = new StringBuilder();
        for (Figure figure : Figure.values()) {
            b.append(' ').append(figure.name().toLowerCase()).append('=')
                    .append(String.format(java.util.Locale.ROOT, "%.1f", f[figure.ordinal()]));
        }
        return b.toString();
    }

    // ------------------------------------------------------------------ raw counters

    private enum Raw {
        STEPS, WALL, CPU, USER, SCHED_RUN, SCHED_WAIT, LOCK_WAIT, LONG_WAITS, TIER_CPU, TIER_SCHED_WAIT,
        TIER_HOLD, TIER_HOLDS, TIER_LOCK_WAIT, GC_MS, SKIPPED
    }

    private long[] snapshot(LowerTiers tiers) {
        long[] r = new long[Raw.values().length];
        long[] sched = stepSched.read();
        long[] tierSchedNow = tierSched.read();
        r[Raw.STEPS.ordinal()] = steps;
        r[Raw.WALL.ordinal()] = System.nanoTime();
        r[Raw.CPU.ordinal()] = threads.getCurrentThreadCpuTime();
        r[Raw.USER.ordinal()] = threads.getCurrentThreadUserTime();
        r[Raw.SCHED_RUN.ordinal()] = sched[0];
        r[Raw.SCHED_WAIT.ordinal()] = sched[1];
        r[Raw.LOCK_WAIT.ordinal()] = stepLockWaitNanos;
        r[Raw.LONG_WAITS.ordinal()] = longWaits;
        r[Raw.TIER_CPU.ordinal()] = tierThreadId < 0 ? 0 : Math.max(0, threads.getThreadCpuTime(tierThreadId));
        r[Raw.TIER_SCHED_WAIT.ordinal()] = tierSchedNow[1];
        r[Raw.TIER_HOLD.ordinal()] = tierHoldNanos.get();
        r[Raw.TIER_HOLDS.ordinal()] = tierHolds.get();
        r[Raw.TIER_LOCK_WAIT.ordinal()] = tierLockWaitNanos.get();
        long gc = 0;
        for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
            gc += Math.max(0, bean.getCollectionTime());
        }
        r[Raw.GC_MS.ordinal()] = gc;
        r[Raw.SKIPPED.ordinal()] = tiers == null ? 0 : tiers.stats(KvTier.KV_TIER_HOST).skippedOffloads();
        return r;
    }

    private long delta(long[] now, Raw raw) {
        return now[raw.ordinal()] - start[raw.ordinal()];
    }

    private double us(long[] now, Raw raw) {
        return delta(now, raw) / 1000.0;
    }
}
