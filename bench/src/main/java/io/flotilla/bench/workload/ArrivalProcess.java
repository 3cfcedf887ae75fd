package io.flotilla.bench.workload;

import java.util.Locale;
import java.util.SplittableRandom;

/**
 * Arrival times for synthetic workloads at an average of {@code rate} requests per second.
 * <ul>
 *   <li>{@code constant}: one arrival every {@code 1000 / rate} ms, the first at 0.</li>
 *   <li>{@code poisson}: exponential gaps with mean {@code 1000 / rate} ms.</li>
 *   <li>{@code bursty}: on/off-modulated Poisson. Time alternates between an ON window of
 *       {@code onMs} and an OFF window of {@code offMs}, starting with ON. No request arrives while OFF;
 *       while ON, arrivals are Poisson at {@code rate × (onMs + offMs) / onMs}, so the long-run average
 *       is still {@code rate}. Implemented by drawing a Poisson process in "ON time" and mapping ON
 *       time {@code t} to wall time {@code floor(t / onMs) × (onMs + offMs) + t mod onMs}.</li>
 * </ul>
 * Deterministic for a given seed.
 */
public final class ArrivalProcess {

    public enum Kind {
        CONSTANT, POISSON, BURSTY;

        public static Kind parse(String s) {
            return valueOf(s.trim().toUpperCase(Locale.ROOT));
        }
    }

    private final Kind kind;
    private final double meanGapMs;
    private final double onMs;
    private final double offMs;
    private final SplittableRandom random;
    private double clock;
    private boolean first = true;

    public ArrivalProcess(Kind kind, double rate, double onMs, double offMs, long seed) {
        if (!(rate > 0)) {
            throw new IllegalArgumentException("--rate must be positive, got " + rate);
        }
        if (kind == Kind.BURSTY && (!(onMs > 0) || offMs < 0)) {
            throw new IllegalArgumentException("bursty arrivals need --burst-on-ms > 0 and --burst-off-ms >= 0");
        }
        this.kind = kind;
        this.meanGapMs = 1000.0 / rate;
        this.onMs = onMs;
        this.offMs = offMs;
        this.random = new SplittableRandom(seed);
    }

    /** Milliseconds from the start of the workload to the next arrival; never decreases. */
    public double next() {
        switch (kind) {
            case CONSTANT -> {
                if (!first) {
                    clock += meanGapMs;
                }
                first = false;
                return clock;
            }
            case POISSON -> {
                clock += exponential(meanGapMs);
                return clock;
            }
            default -> {
                // clock counts ON time only.
                clock += exponential(meanGapMs * onMs / (onMs + offMs));
                double periods = Math.floor(clock / onMs);
                return periods * (onMs + offMs) + (clock - periods * onMs);
            }
        }
    }

    private double exponential(double mean) {
        return -mean * Math.log(1.0 - random.nextDouble());
    }
}
