package io.flotilla.worker.engine.sim;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A simulated clock that moves only when told to, and a {@link Sleeper} whose sleeps move it:
 * an engine driven with it runs steps back to back while simulated time advances by each step's
 * duration. Thread-safe.
 */
public final class ManualClock extends Clock implements Sleeper {

    private final Instant origin;
    private final AtomicLong elapsedNanos = new AtomicLong();

    public ManualClock(Instant origin) {
        this.origin = origin;
    }

    /** A clock starting at 2025-01-01T00:00:00Z. */
    public ManualClock() {
        this(Instant.parse("2025-01-01T00:00:00Z"));
    }

    public void advance(Duration d) {
        if (d.isNegative()) {
            throw new IllegalArgumentException("time never goes back");
        }
        elapsedNanos.addAndGet(d.toNanos());
    }

    /** Simulated time elapsed since the origin. */
    public Duration elapsed() {
        return Duration.ofNanos(elapsedNanos.get());
    }

    @Override
    public long nanoTime() {
        return elapsedNanos.get();
    }

    @Override
    public void sleepNanos(long nanos) {
        if (nanos > 0) {
            elapsedNanos.addAndGet(nanos);
        }
    }

    @Override
    public Instant instant() {
        return origin.plusNanos(elapsedNanos.get());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        if (!ZoneOffset.UTC.equals(zone)) {
            throw new UnsupportedOperationException("ManualClock is UTC only");
        }
        return this;
    }
}
