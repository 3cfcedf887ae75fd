package io.flotilla.protocol.time;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/**
 * A {@link Clock} that never jumps: it starts at the system time of its creation and then advances with
 * {@link System#nanoTime()}, so NTP steps and manual clock changes do not move it. Leases and timeouts
 * measured on it are immune to wall-clock changes; its instants stay close to wall time (they drift only
 * by the adjustments made since start), which is what logs, snapshot file names and health details need.
 */
public final class MonotonicClock extends Clock {

    private final long startMillis;
    private final long startNanos;
    private final ZoneId zone;

    private MonotonicClock(long startMillis, long startNanos, ZoneId zone) {
        this.startMillis = startMillis;
        this.startNanos = startNanos;
        this.zone = zone;
    }

    /** A monotonic clock starting now, in UTC. */
    public static MonotonicClock start() {
        return new MonotonicClock(System.currentTimeMillis(), System.nanoTime(), ZoneOffset.UTC);
    }

    @Override
    public long millis() {
        return startMillis + (System.nanoTime() - startNanos) / 1_000_000;
    }

    @Override
    public Instant instant() {
        long nanos = System.nanoTime() - startNanos;
        return Instant.ofEpochMilli(startMillis).plusNanos(nanos);
    }

    @Override
    public ZoneId getZone() {
        return zone;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return new MonotonicClock(startMillis, startNanos, zone);
    }
}
