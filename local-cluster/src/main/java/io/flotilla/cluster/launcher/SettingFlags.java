package io.flotilla.cluster.launcher;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Repeatable {@code KEY=VALUE} flags that pass any setting of one service through the launcher
 * ({@code --planner-opt}, {@code --gateway-opt}): keys are relaxed property names under the service's
 * prefix, with or without it; a key given twice, or one the launcher sets itself, is refused by name.
 */
final class SettingFlags {

    /** Property names, with map keys in brackets ({@code flow.tenants[key-1a2b].max-in-flight}). */
    private static final Pattern KEY = Pattern.compile("[a-z0-9][a-z0-9.\\-]*(\\[[^\\]=\\s]+][a-z0-9.\\-]*)*");

    private SettingFlags() {
    }

    /**
     * @param flag      the flag, for messages ({@code --gateway-opt})
     * @param prefix    the service's prefix ({@code flotilla.gateway.}), accepted and stripped
     * @param opts      the flag's values in the order given
     * @param ownedBy   for keys the launcher sets itself, the flag that sets them; null for any other key
     */
    static Map<String, String> parse(String flag, String prefix, List<String> opts, Function<String, String> ownedBy) {
        Map<String, String> settings = new LinkedHashMap<>();
        for (String opt : opts) {
            int eq = opt.indexOf('=');
            if (eq <= 0) {
                throw new LauncherException(flag + " wants KEY=VALUE (a " + service(prefix) + " setting), not " + opt);
            }
            String key = opt.substring(0, eq).trim();
            if (key.startsWith(prefix)) {
                key = key.substring(prefix.length());
            }
            check(flag, prefix, key, ownedBy);
            if (settings.put(key, opt.substring(eq + 1).trim()) != null) {
                throw new LauncherException(flag + " " + key + " is given twice");
            }
        }
        return settings;
    }

    static void check(String flag, String prefix, String key, Function<String, String> ownedBy) {
        if (!KEY.matcher(key).matches()) {
            throw new LauncherException(flag + " " + key + ": not a " + service(prefix) + " setting name");
        }
        String owner = ownedBy.apply(key);
        if (owner != null) {
            throw new LauncherException(flag + " " + key + ": set it with " + owner);
        }
    }

    private static String service(String prefix) {
        return prefix.endsWith(".") ? prefix.substring(0, prefix.length() - 1) : prefix;
    }

    /** {@code --<prefix><key>=<value>} for each setting. */
    static List<String> args(String prefix, Map<String, String> settings) {
        return settings.entrySet().stream().map(e -> "--" + prefix + e.getKey() + "=" + e.getValue()).toList();
    }

    /** Whether {@code key} is one of {@code owned} or lies under one of them. */
    static boolean under(String key, Set<String> owned) {
        return owned.stream().anyMatch(o -> key.equals(o) || key.startsWith(o + ".") || key.startsWith(o + "["));
    }
}
