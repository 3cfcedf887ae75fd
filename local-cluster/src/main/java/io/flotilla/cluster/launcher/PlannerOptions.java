package io.flotilla.cluster.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How the local cluster runs its planner ({@code bin/flotilla up --planner … --planner-interval …
 * --planner-opt KEY=VALUE}): the connector that applies its decisions, its interval and any other
 * {@code flotilla.planner.*} setting. The planner's {@code sim-speedup} always follows the cluster's,
 * so its built-in performance model describes the simulated workers it plans, and its {@code model} is the
 * cluster's {@code --model} ({@link ServedModel#plannerArgs()}).
 *
 * @param connector shadow (record only) or local (start and drain this cluster's workers)
 * @param interval  planning interval, or {@code null} for the planner's default
 * @param settings  further {@code flotilla.planner.<key>} values, in the order given
 */
public record PlannerOptions(String connector, Duration interval, Map<String, String> settings) {

    /** The default: decisions are recorded, nothing is scaled. */
    public static final PlannerOptions SHADOW = new PlannerOptions("shadow", null, Map.of());

    /** Keys the launcher sets itself; {@code --planner-opt} must not set them a second time. */
    private static final Set<String> OWN_KEYS = Set.of("connector", "interval", "sim-speedup", "model");
    private static final Pattern DURATION = Pattern.compile("(\\d+)(ms|s|m)?");

    public PlannerOptions {
        if (!"shadow".equals(connector) && !"local".equals(connector)) {
            throw new LauncherException("--planner must be shadow or local, not " + connector);
        }
        if (interval != null && (interval.isNegative() || interval.isZero())) {
            throw new LauncherException("--planner-interval must be positive");
        }
        for (String key : settings.keySet()) {
            SettingFlags.check("--planner-opt", "flotilla.planner.", key, PlannerOptions::ownerOf);
        }
        settings = Collections.unmodifiableMap(new LinkedHashMap<>(settings));
    }

    /** From the command line: {@code interval} as 500ms, 5s, 2m or plain seconds; {@code opts} as KEY=VALUE. */
    public static PlannerOptions parse(String connector, String interval, List<String> opts) {
        Map<String, String> settings = SettingFlags.parse("--planner-opt", "flotilla.planner.", opts, PlannerOptions::ownerOf);
        return new PlannerOptions(connector, interval == null || interval.isBlank() ? null : duration(interval), settings);
    }

    private static String ownerOf(String key) {
        if (!OWN_KEYS.contains(key)) {
            return null;
        }
        return switch (key) {
            case "sim-speedup" -> "--sim-speedup (the planner follows the workers)";
            case "interval" -> "--planner-interval";
            case "model" -> "--model (the planner plans the served model's pools)";
            default -> "--planner";
        };
    }

    static Duration duration(String text) {
        Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
        if (!m.matches()) {
            throw new LauncherException("--planner-interval wants 500ms, 5s, 2m or seconds, not " + text);
        }
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        return switch (unit) {
            case "ms" -> Duration.ofMillis(n);
            case "m" -> Duration.ofMinutes(n);
            default -> Duration.ofSeconds(n);
        };
    }

    /** The planner's command-line arguments for a cluster whose simulated workers run {@code simSpeedup} times faster. */
    public List<String> args(double simSpeedup) {
        List<String> out = new ArrayList<>();
        out.add("--flotilla.planner.connector=" + connector);
        out.add("--flotilla.planner.sim-speedup=" + simSpeedup);
        if (interval != null) {
            out.add("--flotilla.planner.interval=" + interval.toMillis() + "ms");
        }
        out.addAll(SettingFlags.args("flotilla.planner.", settings));
        return out;
    }
}
