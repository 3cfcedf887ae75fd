package io.flotilla.worker.engine.sim;

import java.util.List;

/**
 * The LoRA adapters of a simulated engine.
 *
 * @param names  adapters it can serve (none by default)
 * @param slots  adapters loaded at once (4); loading another unloads the least recently used idle one
 * @param loadMs simulated time one load takes before the first step of a request for it, divided by the
 *               engine's speedup like step times (0)
 */
public record SimAdapters(List<String> names, int slots, double loadMs) {

    public static final int DEFAULT_SLOTS = 4;
    public static final SimAdapters NONE = new SimAdapters(List.of(), DEFAULT_SLOTS, 0);

    public SimAdapters {
        names = List.copyOf(names);
        if (slots < 1) {
            throw new IllegalArgumentException("adapter slots must be at least 1, got " + slots);
        }
        if (!(loadMs >= 0) || Double.isInfinite(loadMs)) {
            throw new IllegalArgumentException("adapter load time must be finite and >= 0, got " + loadMs);
        }
        for (String n : names) {
            if (n == null || n.isBlank()) {
                throw new IllegalArgumentException("adapter names must not be blank");
            }
        }
        if (names.stream().distinct().count() != names.size()) {
            throw new IllegalArgumentException("adapter names must be distinct: " + names);
        }
    }
}
