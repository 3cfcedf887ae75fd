package io.flotilla.cluster.launcher;

import io.flotilla.protocol.Ports;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * How the local cluster runs its gateways ({@code bin/flotilla up --gateways N --redis HOST:PORT|none
 * --gateway-opt KEY=VALUE}): how many replicas, where they share their limits, and any other
 * {@code flotilla.gateway.*} setting (rate limit, API keys, flows), the same for every replica.
 *
 * <p>Replicas share the per-key rate limit and the per-tenant in-flight limit through one Redis: with
 * more than one gateway and no {@code --redis}, the launcher starts Debian's {@code redis-server} on
 * {@link Ports#REDIS} as it starts Kafka. {@code --redis none} leaves every replica counting alone (a limit
 * of N then admits N per replica).
 *
 * @param replicas gateway processes (1 … {@link Ports#MAX_GATEWAYS})
 * @param redis    {@code host:port} of the Redis the replicas share, {@link #LAUNCHED} for the one the
 *                 launcher starts, or null for none
 * @param settings further {@code flotilla.gateway.<key>} values, in the order given
 */
public record GatewayOptions(int replicas, String redis, Map<String, String> settings) {

    /** The Redis the launcher starts itself, on 127.0.0.1:{@link Ports#REDIS}. */
    public static final String LAUNCHED = "launched";
    public static final GatewayOptions ONE = new GatewayOptions(1, null, Map.of());

    private static final Set<String> OWN_KEYS = Set.of("router-address", "default-model", "limits.redis-uri",
            "auth.api-keys");
    private static final Pattern ADDRESS = Pattern.compile("[A-Za-z0-9.\\-]+:\\d{1,5}");

    public GatewayOptions {
        if (replicas < 1 || replicas > Ports.MAX_GATEWAYS) {
            throw new LauncherException("--gateways must be between 1 and " + Ports.MAX_GATEWAYS);
        }
        if (redis != null && !LAUNCHED.equals(redis) && !ADDRESS.matcher(redis).matches()) {
            throw new LauncherException("--redis wants HOST:PORT or none, not " + redis);
        }
        for (String key : settings.keySet()) {
            SettingFlags.check("--gateway-opt", "flotilla.gateway.", key, GatewayOptions::ownerOf);
        }
        settings = Collections.unmodifiableMap(new LinkedHashMap<>(settings));
    }

    /**
     * From the command line.
     *
     * @param redisFlag {@code --redis}: null (a launched Redis with more than one gateway, none with one),
     *                  {@code none}, or {@code HOST:PORT}
     */
    public static GatewayOptions parse(int replicas, String redisFlag, List<String> opts) {
        String redis;
        if (redisFlag == null) {
            redis = replicas > 1 ? LAUNCHED : null;
        } else if ("none".equalsIgnoreCase(redisFlag.trim())) {
            redis = null;
        } else {
            redis = redisFlag.trim();
        }
        return new GatewayOptions(replicas, redis,
                SettingFlags.parse("--gateway-opt", "flotilla.gateway.", opts, GatewayOptions::ownerOf));
    }

    private static String ownerOf(String key) {
        if (!SettingFlags.under(key, OWN_KEYS)) {
            return null;
        }
        return switch (key) {
            case "limits.redis-uri" -> "--redis";
            case "default-model" -> "--model (the first one is the default)";
            case "auth.api-keys" -> "--api-key (repeatable: each key a tenant)";
            default -> "--routers (the launcher gives every gateway every router)";
        };
    }

    /** Whether the launcher starts the Redis the gateways share. */
    public boolean launchesRedis() {
        return LAUNCHED.equals(redis);
    }

    /** {@code redis://host:port} of the shared store, or null when every gateway counts alone. */
    public String redisUri() {
        if (redis == null) {
            return null;
        }
        return "redis://" + (launchesRedis() ? "127.0.0.1:" + Ports.REDIS : redis);
    }

    /** Arguments every gateway replica gets from these options. */
    List<String> args() {
        List<String> out = new java.util.ArrayList<>();
        if (redis != null) {
            out.add("--flotilla.gateway.limits.redis-uri=" + redisUri());
        }
        out.addAll(SettingFlags.args("flotilla.gateway.", settings));
        return out;
    }

    void save(ClusterState state) {
        state.setLayout("gateways", Integer.toString(replicas));
        state.setLayout("redis", redis == null ? "" : redis);
    }
}
