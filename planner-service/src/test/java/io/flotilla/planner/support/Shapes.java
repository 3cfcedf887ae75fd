package io.flotilla.planner.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The traffic shapes of the planner evaluation suite (bench {@code TrafficShapes}: the same rate curves,
 * restated here as numbers because the planner does not depend on the bench tool), for scenario tests
 * on a simulated clock.
 */
public final class Shapes {

    private Shapes() {
    }

    /** Every shape by name, in suite order. */
    public static Map<String, List<ShapeSim.Phase>> all() {
        Map<String, List<ShapeSim.Phase>> m = new LinkedHashMap<>();
        m.put("single-burst", ShapeSim.phases(40, 0.5, 0.5, 90, 0.5, 10, 40, 10, 10, 10, 10, 0.5, 100, 0.5, 0.5));
        m.put("two-burst", ShapeSim.phases(30, 1, 1, 40, 1, 8, 40, 8, 8, 20, 8, 2, 50, 2, 2, 20, 2, 9, 30, 9, 9, 50, 9, 0.5));
        m.put("recurring-50s", ShapeSim.repeat(ShapeSim.phases(15, 1, 1, 8, 1, 9, 15, 9, 9, 4, 9, 1, 8, 1, 1), 6));
        m.put("recurring-100s", ShapeSim.repeat(ShapeSim.phases(35, 1, 1, 15, 1, 9, 25, 9, 9, 10, 9, 1, 15, 1, 1), 3));
        m.put("diurnal", diurnal(100, 3, 5, 4, 5));
        m.put("slow-ramp", ShapeSim.phases(30, 0.5, 0.5, 180, 0.5, 9, 40, 9, 9, 30, 9, 0.5));
        m.put("flash-crowd", ShapeSim.phases(60, 1, 1, 5, 1, 9, 45, 9, 9, 10, 9, 1, 160, 1, 1));
        m.put("noisy-plateau", noisy(5, 0.4, 10, 28, 61));
        return m;
    }

    /**
     * Shapes outside the suite, to check a choice made on the suite against: {@code two-rise-70s}, a
     * recurring burst the planner had not seen, restated from its description (two rises of 1 → 9 req/s in
     * 10 s, 70 s apart, with a 40 s lull at 1 req/s between them); not a recorded trace.
     */
    public static Map<String, List<ShapeSim.Phase>> heldOut() {
        Map<String, List<ShapeSim.Phase>> m = new LinkedHashMap<>();
        m.put("two-rise-70s", ShapeSim.phases(30, 1, 1, 10, 1, 9, 15, 9, 9, 5, 9, 1, 40, 1, 1, 10, 1, 9, 15, 9, 9, 5, 9, 1, 100, 1, 1));
        return m;
    }

    /** mean − amplitude·cos(2πt/period) as linear pieces of {@code step} seconds. */
    static List<ShapeSim.Phase> diurnal(double period, int periods, double mean, double amplitude, double step) {
        List<ShapeSim.Phase> out = new ArrayList<>();
        for (int i = 0; i < Math.round(period * periods / step); i++) {
            out.add(new ShapeSim.Phase(step, mean - amplitude * Math.cos(2 * Math.PI * i * step / period),
                    mean - amplitude * Math.cos(2 * Math.PI * (i + 1) * step / period)));
        }
        return out;
    }

    /** Linear pieces between seeded levels uniform in level·(1 ± spread). */
    static List<ShapeSim.Phase> noisy(double level, double spread, double step, int pieces, long seed) {
        SplittableRandom random = new SplittableRandom(seed);
        List<ShapeSim.Phase> out = new ArrayList<>();
        double from = level;
        for (int i = 0; i < pieces; i++) {
            double to = level * (1 + spread * (2 * random.nextDouble() - 1));
            out.add(new ShapeSim.Phase(step, from, to));
            from = to;
        }
        return out;
    }
}
