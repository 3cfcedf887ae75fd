package io.flotilla.bench.planner;

import io.flotilla.bench.workload.BurstyTrace;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The planner evaluation's traffic shapes: request-rate curves (piecewise linear, {@link BurstyTrace})
 * that compress shapes of real traffic — lasting minutes to a day — into 280–300 s, with a seed for the
 * arrivals. Prompts 2,000 ± 25 % tokens, outputs 64 ± 25 % tokens for every shape, so that the shapes
 * differ only in time. Peaks are 7–10 requests/s: what four simulated workers at
 * {@code --sim-speedup 0.25} serve and the two shared cores can drive.
 */
public final class TrafficShapes {

    /**
     * One shape.
     *
     * @param name        what the suite and its report call it
     * @param description one line for the report
     * @param phases      the rate curve
     * @param seed        the arrivals' and lengths' seed
     */
    public record Shape(String name, String description, List<BurstyTrace.Phase> phases, long seed) {

        public Shape {
            phases = List.copyOf(phases);
        }

        /** The highest rate of the curve, requests/s. */
        public double peakRate() {
            return phases.stream().mapToDouble(p -> Math.max(p.fromRate(), p.toRate())).max().orElse(0);
        }

        public double seconds() {
            return phases.stream().mapToDouble(BurstyTrace.Phase::seconds).sum();
        }
    }

    private static final Map<String, Shape> SHAPES = new LinkedHashMap<>();

    static {
        add(new Shape("single-burst", "a 90 s ramp to one burst at 10 req/s, then quiet (the original evaluation trace)",
                BurstyTrace.parsePhases("40s@0.5,90s@0.5-10,40s@10,10s@10-0.5,100s@0.5"), 9));
        add(new Shape("two-burst", "two bursts 100 s apart, the second steeper",
                BurstyTrace.parsePhases("30s@1,40s@1-8,40s@8,20s@8-2,50s@2,20s@2-9,30s@9,50s@9-0.5"), 31));
        add(new Shape("recurring-50s", "six bursts to 9 req/s, one every 50 s",
                repeat("15s@1,8s@1-9,15s@9,4s@9-1,8s@1", 6), 41));
        add(new Shape("recurring-100s", "three bursts to 9 req/s, one every 100 s",
                repeat("35s@1,15s@1-9,25s@9,10s@9-1,15s@1", 3), 43));
        add(new Shape("diurnal", "a day compressed into 100 s, three times: 5 − 4·cos(2πt/100) req/s (1 to 9)", diurnal(100, 3, 5, 4, 5), 47));
        add(new Shape("slow-ramp", "a 180 s ramp from 0.5 to 9 req/s, 40 s there, down in 30 s",
                BurstyTrace.parsePhases("30s@0.5,180s@0.5-9,40s@9,30s@9-0.5"), 53));
        add(new Shape("flash-crowd", "1 req/s, then 9 req/s within 5 s for 45 s, then back",
                BurstyTrace.parsePhases("60s@1,5s@1-9,45s@9,10s@9-1,160s@1"), 59));
        add(new Shape("noisy-plateau", "5 req/s ± 40 %: a new level every 10 s (seeded), ramped linearly", noisy(5, 0.4, 10, 28, 61), 61));
    }

    private TrafficShapes() {
    }

    private static void add(Shape s) {
        SHAPES.put(s.name(), s);
    }

    /** Every shape, in suite order. */
    public static Map<String, Shape> all() {
        return Collections.unmodifiableMap(SHAPES);
    }

    public static Shape named(String name) {
        Shape s = SHAPES.get(name);
        if (s == null) {
            throw new IllegalArgumentException("no traffic shape " + name + " (" + String.join(", ", SHAPES.keySet()) + ")");
        }
        return s;
    }

    /** {@code cycle} (a phase list) {@code times} times over. */
    static List<BurstyTrace.Phase> repeat(String cycle, int times) {
        List<BurstyTrace.Phase> one = BurstyTrace.parsePhases(cycle);
        List<BurstyTrace.Phase> out = new ArrayList<>();
        for (int i = 0; i < times; i++) {
            out.addAll(one);
        }
        return out;
    }

    /**
     * mean − amplitude·cos(2πt/period) for {@code periods} periods, as linear pieces of {@code stepSeconds}
     * (the rate starts and ends each period at its minimum).
     */
    static List<BurstyTrace.Phase> diurnal(double period, int periods, double mean, double amplitude, double stepSeconds) {
        List<BurstyTrace.Phase> out = new ArrayList<>();
        int steps = (int) Math.round(period * periods / stepSeconds);
        for (int i = 0; i < steps; i++) {
            double from = mean - amplitude * Math.cos(2 * Math.PI * i * stepSeconds / period);
            double to = mean - amplitude * Math.cos(2 * Math.PI * (i + 1) * stepSeconds / period);
            out.add(new BurstyTrace.Phase(stepSeconds, round(from), round(to)));
        }
        return out;
    }

    /** {@code pieces} linear pieces of {@code stepSeconds} between seeded levels uniform in level·(1 ± spread). */
    static List<BurstyTrace.Phase> noisy(double level, double spread, double stepSeconds, int pieces, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<BurstyTrace.Phase> out = new ArrayList<>();
        double from = level;
        for (int i = 0; i < pieces; i++) {
            double to = round(level * (1 + spread * (2 * random.nextDouble() - 1)));
            out.add(new BurstyTrace.Phase(stepSeconds, from, to));
            from = to;
        }
        return out;
    }

    private static double round(double rate) {
        return Math.round(rate * 100) / 100.0;
    }
}
