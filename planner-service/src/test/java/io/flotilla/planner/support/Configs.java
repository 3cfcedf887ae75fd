package io.flotilla.planner.support;

import io.flotilla.planner.config.PlannerProperties;
import io.flotilla.planner.plan.PlannerConfig;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Planner configurations for tests, bound from the same properties users set ({@link PlannerProperties#bind}),
 * so a test states only the settings it changes and every other value is the documented default. Model
 * {@code m}; the ready time is held fixed ({@code cold-start.learn=false}) unless a setting says otherwise,
 * since simulated replicas are READY in the next interval.
 */
public final class Configs {

    private Configs() {
    }

    /**
     * The planner as bench/planner-eval.sh configures it (5 s intervals, 4 s / 200 ms targets for engines 4×
     * slower, a 30 s prior ready time that is then measured, a 10 s shortest hold, periods of 25–120 s, up to
     * 4 replicas): key, value pairs for {@link #aggregated}.
     */
    public static final List<String> EVALUATION = List.of("interval", "5s", "sla.ttft", "4000ms", "sla.itl", "200ms",
            "cold-start.ready-time", "30s", "cold-start.learn", "true", "scaling.up-cooldown", "5s", "scaling.min-hold", "10s",
            "seasonality.min-period", "25s", "seasonality.max-period", "120s", "aggregated.max", "4");

    /** An aggregated pool; {@code settings} are key, value, key, value … (keys below {@code flotilla.planner}). */
    public static PlannerConfig aggregated(String... settings) {
        return of("aggregated", settings);
    }

    /** Prefill and decode pools. */
    public static PlannerConfig disaggregated(String... settings) {
        return of("disaggregated", settings);
    }

    private static PlannerConfig of(String mode, String... settings) {
        if (settings.length % 2 != 0) {
            throw new IllegalArgumentException("settings come in key, value pairs");
        }
        Map<String, String> m = new LinkedHashMap<>();
        m.put("model", "m");
        m.put("mode", mode);
        m.put("cold-start.learn", "false");
        for (int i = 0; i < settings.length; i += 2) {
            m.put(settings[i], settings[i + 1]);
        }
        return PlannerProperties.bind(m).toConfig();
    }
}
