package io.flotilla.planner.config;

import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.core.env.Environment;
import org.springframework.core.env.SystemEnvironmentPropertySource;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Keys that moved into groups stop the planner with their new names. {@link PlannerProperties} refuses any
 * key it does not read, but its message names only the unread key; this one says what to write instead.
 *
 * <p>An environment variable binds an old key and its new one alike when the two differ only in a {@code -}
 * against a {@code .} ({@code FLOTILLA_PLANNER_LOCAL_HOME} is {@code local-home} and {@code local.home}):
 * a variable that sets the new key is the new key's, not an old one.
 */
final class RenamedKeys {

    private static final String PREFIX = PlannerProperties.PREFIX + ".";

    /** Old key → the key that replaced it, below {@code flotilla.planner}. */
    private static final Map<String, String> RENAMED = pairs(
            "ready-time", "cold-start.ready-time",
            "learn-ready-time", "cold-start.learn",
            "ttft-target", "sla.ttft",
            "itl-target", "sla.itl",
            "headroom", "sla.headroom",
            "local-home", "local.home",
            "local-max-workers", "local.max-workers",
            "drain-deadline", "deadlines.drain",
            "group-ready-deadline", "deadlines.group-ready");

    private RenamedKeys() {
    }

    /** Fails naming every old key {@code environment} sets and the key to use instead. */
    static void check(Environment environment) {
        List<String> found = new ArrayList<>();
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(environment)) {
            boolean variables = source.getUnderlyingSource() instanceof SystemEnvironmentPropertySource;
            RENAMED.forEach((old, replacement) -> {
                String line = PREFIX + old + " became " + PREFIX + replacement;
                if (sets(source, old) && !(variables && sets(source, replacement)) && !found.contains(line)) {
                    found.add(line);
                }
            });
        }
        if (!found.isEmpty()) {
            throw new IllegalStateException("Settings no longer read: " + String.join("; ", found)
                    + ". Rename them (planner-service/README.md lists the planner's keys).");
        }
    }

    private static boolean sets(ConfigurationPropertySource source, String key) {
        return source.getConfigurationProperty(ConfigurationPropertyName.of(PREFIX + key)) != null;
    }

    private static Map<String, String> pairs(String... oldThenNew) {
        Map<String, String> out = new LinkedHashMap<>();
        for (int i = 0; i < oldThenNew.length; i += 2) {
            out.put(oldThenNew[i], oldThenNew[i + 1]);
        }
        return out;
    }
}
