package io.flotilla.planner.support;

import io.flotilla.planner.config.PlannerProperties;
import io.flotilla.planner.plan.PlannerConfig;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Planner configurations for tests, bound from the same properties users set ({@link PlannerProperties#bind}),
 * so a test states only the settings it changes and every other value is the documented default. Model
 * {@code m}; the ready time is held fixed ({@code learn-ready-time=false}) unless a setting says otherwise,
 * since simulated replicas are READY in the next interval.
 */
public final class Configs {

    private Configs() {
    }

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
        m.put("learn-ready-time", "false");
        for (int i = 0; i < settings.length; i += 2) {
            m.put(settings[i], settings[i + 1]);
        }
        return PlannerProperties.bind(m).toConfig();
    }
}
