package io.flotilla.worker.engine.sim;

import io.flotilla.worker.engine.AdapterStatus;
import io.flotilla.worker.engine.InvalidRequestException;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated engine's LoRA slots: which adapters are loaded, since when, and which are in use.
 * Single-threaded under the scheduler's contract; time is the scheduler's simulated millisecond clock.
 *
 * <p>Rules:
 * <ul>
 *   <li>A request names an adapter of {@link SimAdapters#names()} or none; another is refused at submit.</li>
 *   <li>An adapter is <i>in use</i> while a request for it is waiting or running ({@link #retain}/{@link #release});
 *       only an adapter not in use is unloaded, the least recently used first.</li>
 *   <li>A waiting request for an adapter that is not loaded starts its load when a slot is free or can
 *       be freed; the load takes {@code loadMs / speedup}, and the request is admitted once it is done.
 *       Requests behind it that need no load are admitted meanwhile.</li>
 *   <li>At most {@code slots} adapters are loaded (or loading) at once.</li>
 * </ul>
 */
final class AdapterTable {

    private final SimAdapters config;
    private final double loadMs;
    /** Loaded (or loading) adapters → when they are ready, in access order: the eldest is the LRU. */
    private final LinkedHashMap<String, Long> loaded = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<String, Integer> inUse = new HashMap<>();
    private long loads;
    private long evictions;
    private Runnable listener = () -> { };

    AdapterTable(SimAdapters config, double speedup) {
        this.config = config;
        this.loadMs = config.loadMs() / speedup;
    }

    void setListener(Runnable listener) {
        this.listener = listener;
    }

    boolean enabled() {
        return !config.names().isEmpty();
    }

    /** @throws InvalidRequestException when the engine has no adapter {@code name} */
    void check(String name) {
        if (!name.isEmpty() && !config.names().contains(name)) {
            throw new InvalidRequestException("unknown LoRA adapter '" + name + "'"
                    + (config.names().isEmpty() ? ": this engine serves no adapter" : "; this engine serves " + config.names()));
        }
    }

    void retain(String name) {
        if (!name.isEmpty()) {
            inUse.merge(name, 1, Integer::sum);
        }
    }

    void release(String name) {
        if (!name.isEmpty()) {
            inUse.computeIfPresent(name, (k, n) -> n == 1 ? null : n - 1);
        }
    }

    /**
     * Whether a request for {@code name} may run at {@code nowMs}; starts its load when it is not loaded
     * and a slot is free or held by an adapter not in use. The base model ({@code ""}) is always ready.
     */
    boolean ready(String name, long nowMs) {
        if (name.isEmpty()) {
            return true;
        }
        Long readyAt = loaded.get(name); // an access: most recently used now
        if (readyAt != null) {
            return nowMs >= readyAt;
        }
        if (loaded.size() >= config.slots() && !evictIdle()) {
            return false;
        }
        long at = nowMs + (long) Math.ceil(loadMs);
        loaded.put(name, at);
        loads++;
        listener.run();
        return nowMs >= at;
    }

    private boolean evictIdle() {
        for (Iterator<String> it = loaded.keySet().iterator(); it.hasNext(); ) {
            String lru = it.next();
            if (!inUse.containsKey(lru)) {
                it.remove();
                evictions++;
                return true;
            }
        }
        return false;
    }

    long loads() {
        return loads;
    }

    long evictions() {
        return evictions;
    }

    AdapterStatus status() {
        List<String> mru = new ArrayList<>(loaded.keySet());
        java.util.Collections.reverse(mru);
        return new AdapterStatus(mru, config.names(), config.slots(), loadMs, AdapterStatus.CONFIGURED, loads, evictions);
    }
}
