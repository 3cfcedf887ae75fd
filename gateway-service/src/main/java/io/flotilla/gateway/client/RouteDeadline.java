package io.flotilla.gateway.client;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * The deadline of one {@code Route} call, sized from the measured tail of Route latency instead of a
 * constant: {@code clamp(multiplier × p(percentile) of the last one to two windows, floor, ceiling)}.
 * Latencies go into an HdrHistogram {@link Recorder} (lock-free for writers); every {@code window} the
 * interval histogram is taken and merged with the previous one, so the tail follows load within a
 * window or two and one quiet window does not erase a busy one. A call that timed out is recorded at
 * its deadline (a lower bound of its latency), so a router that gets slower raises the deadline instead
 * of being measured only by the calls that still made it. Until a window holds {@code minSamples}
 * calls the deadline stays where it was, starting at the ceiling (a cold JVM's first routes are slow).
 */
public final class RouteDeadline {

    private static final long MAX_NANOS = Duration.ofMinutes(1).toNanos();

    private final Duration floor;
    private final Duration ceiling;
    private final double percentile;
    private final double multiplier;
    private final long windowNanos;
    private final int minSamples;
    private final LongSupplier nanoTime;
    private final Recorder recorder = new Recorder(1000, MAX_NANOS, 2);
    private Histogram previous;
    private long windowStart;
    private volatile long deadlineNanos;

    public RouteDeadline(Duration floor, Duration ceiling, double percentile, double multiplier, Duration window,
                         int minSamples, LongSupplier nanoTime) {
        if (floor.isNegative() || floor.compareTo(ceiling) > 0 || !(percentile > 0 && percentile <= 100) || !(multiplier >= 1)) {
            throw new IllegalArgumentException("route deadline: need 0 <= floor <= ceiling, 0 < percentile <= 100, multiplier >= 1");
        }
        this.floor = floor;
        this.ceiling = ceiling;
        this.percentile = percentile;
        this.multiplier = multiplier;
        this.windowNanos = window.toNanos();
        this.minSamples = minSamples;
        this.nanoTime = nanoTime;
        this.windowStart = nanoTime.getAsLong();
        this.deadlineNanos = ceiling.toNanos();
    }

    /** The deadline for a Route call starting now. */
    public Duration current() {
        roll();
        return Duration.ofNanos(deadlineNanos);
    }

    /** A Route call answered after {@code nanos}. */
    public void answered(long nanos) {
        recorder.recordValue(Math.max(1000, Math.min(MAX_NANOS, nanos)));
    }

    /** A Route call gave up at its deadline {@code deadline}. */
    public void timedOut(Duration deadline) {
        answered(deadline.toNanos());
    }

    private void roll() {
        long now = nanoTime.getAsLong();
        if (now - windowStart < windowNanos) {
            return;
        }
        synchronized (this) {
            if (now - windowStart < windowNanos) {
                return;
            }
            windowStart = now;
            Histogram interval = recorder.getIntervalHistogram();
            Histogram window = interval.copy();
            if (previous != null) {
                window.add(previous);
            }
            previous = interval;
            if (window.getTotalCount() >= minSamples) {
                long tail = (long) (window.getValueAtPercentile(percentile) * multiplier);
                deadlineNanos = Math.max(floor.toNanos(), Math.min(ceiling.toNanos(), tail));
            }
        }
    }
}
