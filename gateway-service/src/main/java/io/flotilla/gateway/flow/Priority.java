package io.flotilla.gateway.flow;

import java.util.Locale;

/**
 * Priority bands, strict between each other: a request of a band is dispatched only when no request
 * of a higher band waits. The order of the constants is the order of the bands (highest first).
 */
public enum Priority {
    INTERACTIVE, STANDARD, BATCH;

    /** {@code interactive}, {@code standard} or {@code batch} (any case); null when {@code value} is none of them. */
    public static Priority parse(String value) {
        if (value == null) {
            return null;
        }
        for (Priority p : values()) {
            if (p.label().equalsIgnoreCase(value.strip())) {
                return p;
            }
        }
        return null;
    }

    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean higherThan(Priority other) {
        return ordinal() < other.ordinal();
    }
}
