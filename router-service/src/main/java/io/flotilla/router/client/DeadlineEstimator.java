package io.flotilla.router.client;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.time.Duration;
import java.util.Objects;

/**
 * The FindMatches deadline, sized from the calls' own recent latency:
 *
 * <pre>
 * deadline = clamp(margin · quantile(latency of the calls in the last window), floor, ceiling)
 * </pre>
 *
 * <p>The window is {@code windowSlices} slices; {@link #roll()} (called once a slice, by the router's
 * timer) closes the current slice and recomputes the deadline. A call that missed its deadline is
 * recorded as having taken that deadline — the true latency is unknown, only that it was at least
 * that — so when more than {@code 1 − quantile} of the calls miss, the tail is the deadline itself and
 * the next deadline is {@code margin} times longer: the deadline climbs by the margin each slice until
 * the misses are rare again or it reaches the ceiling. With fewer than {@code minSamples} calls in the
 * window the deadline stays where it is. A floor equal to the ceiling is a fixed deadline (the tail is
 * still measured).
 *
 * <p><b>The stake.</b> A call may wait longer than that deadline when its prompt is long: up to
 * {@code stake.share} of the prefill its answer may save (the prompt's whole prefill on the fastest worker
 * that could serve it), at most {@code stake.ceiling} ({@link #budgetNanos}). Waiting w costs the request w of
 * TTFT; a wrong guess from the approximate index costs up to that whole prefill, so a long prompt is worth a
 * longer wait than a short one, and the share bounds what the wait can add to its TTFT. Measured on a fresh
 * 4-worker cluster at ≈ 5 req/s of the Mooncake sample: calls of 900–3,400 blocks missed the 50 ms ceiling
 * by 2–70 ms while the router and indexer were still cold or a GC had paused them, and each such miss priced a
 * prompt of 15–55 k tokens from the approximate index.
 *
 * <p>{@link #record} is wait-free and safe from any thread (HdrHistogram's {@link Recorder}); the
 * deadline is one volatile read. {@link #roll()} must not run concurrently with itself.
 */
public final class DeadlineEstimator {

    /** Latencies are recorded in microseconds up to a minute; longer ones count as a minute. */
    private static final long HIGHEST_MICROS = 60_000_000L;

    /**
     * @param floor        the shortest deadline
     * @param ceiling      the longest deadline; also the first one, before any measurement
     * @param quantile     the tail measured, in (0, 1]
     * @param margin       the deadline is this many times the tail (at least 1)
     * @param windowSlices slices in the window (the router rolls one slice a second)
     * @param minSamples   calls a window needs before its tail moves the deadline
     */
    public record Settings(Duration floor, Duration ceiling, double quantile, double margin, int windowSlices,
                           int minSamples) {
        public Settings {
            Objects.requireNonNull(floor, "floor");
            Objects.requireNonNull(ceiling, "ceiling");
            if (floor.isNegative() || floor.isZero() || ceiling.compareTo(floor) < 0) {
                throw new IllegalArgumentException("deadline floor must be positive and at most the ceiling: "
                        + floor + " / " + ceiling);
            }
            if (!(quantile > 0 && quantile <= 1) || !(margin >= 1) || Double.isInfinite(margin)) {
                throw new IllegalArgumentException("quantile must be in (0, 1] and margin a finite number >= 1");
            }
            if (windowSlices < 1 || minSamples < 1) {
                throw new IllegalArgumentException("window slices and minimum samples must be positive");
            }
        }

        /** Calls a window needs before its tail moves the deadline, unless configured otherwise. */
        public static final int MIN_SAMPLES = 20;

        /** A deadline that never moves (its tail is still measured, over 10 s). */
        public static Settings fixed(Duration deadline) {
            return new Settings(deadline, deadline, 0.99, 1.0, 10, MIN_SAMPLES);
        }
    }

    /**
     * How much longer than the deadline a call for a long prompt may wait.
     *
     * @param share   of the prompt's prefill time the wait may reach, in [0, 1]; 0 turns the stake off
     * @param ceiling the longest a call may wait, whatever its prompt
     */
    public record Stake(double share, Duration ceiling) {
        /** No stake: every call has the deadline. */
        public static final Stake NONE = new Stake(0, Duration.ZERO);

        public Stake {
            Objects.requireNonNull(ceiling, "ceiling");
            if (!(share >= 0 && share <= 1) || ceiling.isNegative()) {
                throw new IllegalArgumentException("stake share must be in [0, 1] and its ceiling not negative: "
                        + share + " / " + ceiling);
            }
        }
    }

    private final Settings settings;
    private final Stake stake;
    private final Recorder recorder = new Recorder(HIGHEST_MICROS, 2);
    private final Histogram[] slices;
    private final Histogram window = new Histogram(HIGHEST_MICROS, 2);
    private Histogram recycled;
    private int next;
    private volatile long deadlineNanos;
    private volatile long tailNanos = -1;
    private volatile long windowCount;

    public DeadlineEstimator(Settings settings) {
        this(settings, Stake.NONE);
    }

    public DeadlineEstimator(Settings settings, Stake stake) {
        this.settings = Objects.requireNonNull(settings, "settings");
        this.stake = Objects.requireNonNull(stake, "stake");
        this.slices = new Histogram[settings.windowSlices()];
        this.deadlineNanos = settings.ceiling().toNanos();
    }

    /** One call's latency (for a missed deadline: the deadline it had). */
    public void record(long nanos) {
        recorder.recordValue(Math.min(HIGHEST_MICROS, Math.max(0, nanos / 1000)));
    }

    /** The deadline for the next call. */
    public long deadlineNanos() {
        return deadlineNanos;
    }

    /**
     * The time a call may take: the deadline, or for a prompt whose prefill would take {@code prefillNanos}
     * (0 when unknown), {@code stake.share} of it when that is longer, at most {@code stake.ceiling}.
     */
    public long budgetNanos(long prefillNanos) {
        long d = deadlineNanos;
        if (prefillNanos <= 0 || stake.share() == 0) {
            return d;
        }
        return Math.max(d, Math.min(stake.ceiling().toNanos(), (long) (stake.share() * prefillNanos)));
    }

    /** The measured tail over the last window, or -1 before the first roll with calls in it. */
    public long tailNanos() {
        return tailNanos;
    }

    /** Calls in the last window. */
    public long windowCount() {
        return windowCount;
    }

    public Settings settings() {
        return settings;
    }

    /** Closes the current slice and recomputes the tail and the deadline. */
    public synchronized void roll() {
        Histogram slice = recorder.getIntervalHistogram(recycled);
        recycled = slices[next];
        slices[next] = slice;
        next = (next + 1) % slices.length;
        window.reset();
        for (Histogram h : slices) {
            if (h != null) {
                window.add(h);
            }
        }
        long count = window.getTotalCount();
        windowCount = count;
        if (count == 0) {
            return;
        }
        long tail = window.getValueAtPercentile(settings.quantile() * 100) * 1000;
        tailNanos = tail;
        if (count >= settings.minSamples()) {
            long wanted = (long) Math.ceil(tail * settings.margin());
            deadlineNanos = Math.max(settings.floor().toNanos(), Math.min(settings.ceiling().toNanos(), wanted));
        }
    }
}
