package io.flotilla.router.core;

import java.util.Locale;

/** The configured routing strategy ({@code flotilla.router.mode}). */
public enum Strategy {
    /** Cost model with cache credit from the indexer (or the approximate index). */
    KV("kv"),
    /** The same cost model without cache credit (H = 0). */
    LOAD("load"),
    /** Baseline: cycle through eligible workers. */
    ROUND_ROBIN("round-robin"),
    /** Baseline: uniform choice with an injected seeded random. */
    RANDOM("random");

    private final String configName;

    Strategy(String configName) {
        this.configName = configName;
    }

    public String configName() {
        return configName;
    }

    /** Parses {@code kv}, {@code load}, {@code round-robin} or {@code random} (case-insensitive). */
    public static Strategy parse(String name) {
        String n = name.trim().toLowerCase(Locale.ROOT);
        for (Strategy s : values()) {
            if (s.configName.equals(n)) {
                return s;
            }
        }
        throw new IllegalArgumentException("unknown routing mode '" + name + "'; expected kv, load, round-robin or random");
    }
}
