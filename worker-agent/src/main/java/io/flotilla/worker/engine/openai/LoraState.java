package io.flotilla.worker.engine.openai;

import io.flotilla.worker.engine.AdapterStatus;
import io.flotilla.worker.engine.InvalidRequestException;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Which LoRA adapters one vLLM server holds and which to load or unload next, as a state machine: events
 * (a request takes or gives back an adapter, a load ended, the engine's model list was read, the engine
 * restarted) change the state and say what the driver ({@link LoraAdapters}) must do. No lock, no clock, no
 * I/O: the time comes in with each event, in nanoseconds on one monotonic scale; one driver makes every call.
 *
 * <p>Rules: a request for an adapter that is neither loaded nor loadable (no configured or discovered path)
 * is refused. A request for a loadable adapter that is not loaded waits for its load (one load per adapter at
 * a time; concurrent requests share it). When {@code maxLoaded} adapters are loaded, the least recently used
 * one that no request in flight uses is unloaded first; when every loaded adapter is in use, the load goes
 * ahead anyway and vLLM's own LoRA cache decides what stays on the GPU (counted as {@code overcommitted}).
 * The load time advertised is the mean of the last 16 measured loads, or the configured one before the first.
 */
final class LoraState {

    private static final int LOAD_SAMPLES = 16;

    /**
     * What a request that takes an adapter must do.
     *
     * @param kind   {@code READY}: use it now; {@code JOIN}: wait for its load in progress; {@code LOAD}: start its
     *               load (unloading {@code unload} first when that is not null)
     * @param path   the adapter's {@code lora_path} (for {@code LOAD})
     * @param unload the idle adapter to unload first, or null
     */
    record Take(Kind kind, String path, String unload) {
        enum Kind { READY, JOIN, LOAD }

        static final Take READY = new Take(Kind.READY, null, null);
        static final Take JOIN = new Take(Kind.JOIN, null, null);
    }

    private final LoraSettings settings;
    private final long discoveryIntervalNanos;
    /** Loaded adapters → their path, in access order (eldest = least recently used). */
    private final LinkedHashMap<String, String> loaded = new LinkedHashMap<>(16, 0.75f, true);
    private final Map<String, String> discoveredPaths = new HashMap<>();
    private final Map<String, Integer> inUse = new HashMap<>();
    private final Set<String> loading = new HashSet<>();
    /** Adapters whose unload was asked and has not answered: a model list may still show them. */
    private final Set<String> unloading = new HashSet<>();
    /** When this worker last loaded or unloaded each adapter: a model list asked for earlier is stale for it. */
    private final Map<String, Long> changedAt = new HashMap<>();
    private final ArrayDeque<Double> loadTimes = new ArrayDeque<>();
    private long loads;
    private long unloads;
    private long overcommitted;
    private long lastDiscoveryNanos;
    private boolean discovered;

    LoraState(LoraSettings settings, long discoveryIntervalNanos) {
        this.settings = settings;
        this.discoveryIntervalNanos = discoveryIntervalNanos;
    }

    /** Whether the engine's model list should be read at {@code now}; if so the next read is due an interval later. */
    boolean discoveryDue(long now) {
        if (discovered && now - lastDiscoveryNanos < discoveryIntervalNanos) {
            return false;
        }
        discovered = true;
        lastDiscoveryNanos = now;
        return true;
    }

    /**
     * The engine listed {@code listed} (adapter → path) in a model list asked for at {@code askedAt}: those become
     * loaded, and adapters the engine no longer lists are forgotten, except what this worker loaded, unloaded or
     * is loading since it asked (the list does not show that yet), and an adapter being unloaded does not come
     * back. Returns whether the loaded set changed.
     */
    boolean listed(Map<String, String> listed, long askedAt) {
        discoveredPaths.putAll(listed);
        TreeSet<String> was = new TreeSet<>(loaded.keySet());
        loaded.keySet().removeIf(a -> !listed.containsKey(a) && !loading.contains(a) && !changedSince(a, askedAt));
        listed.forEach((a, p) -> {
            if (!loaded.containsKey(a) && !unloading.contains(a) && !changedSince(a, askedAt)) {
                loaded.put(a, p);
            }
        });
        return !was.equals(new TreeSet<>(loaded.keySet()));
    }

    private boolean changedSince(String adapter, long nanos) {
        Long at = changedAt.get(adapter);
        return at != null && at - nanos >= 0;
    }

    /**
     * A request takes {@code adapter} at {@code now}; it must {@link #release} it when it ends, whether or not
     * the load succeeded.
     *
     * @throws InvalidRequestException when the adapter is neither loaded nor loadable
     */
    Take acquire(String adapter, long now) {
        String path = pathOf(adapter);
        if (!loaded.containsKey(adapter) && path == null) {
            throw new InvalidRequestException("unknown LoRA adapter '" + adapter + "': the engine does not serve it"
                    + " and flotilla.worker.lora.paths has no path for it; this worker serves " + available());
        }
        inUse.merge(adapter, 1, Integer::sum);
        if (loaded.get(adapter) != null) { // an access: most recently used now
            return Take.READY;
        }
        if (loading.contains(adapter)) {
            return Take.JOIN;
        }
        String unload = null;
        if (loaded.size() >= settings.maxLoaded()) {
            unload = idleLeastRecentlyUsed();
            if (unload == null) {
                overcommitted++;
            } else {
                loaded.remove(unload);
                unloading.add(unload);
                changedAt.put(unload, now);
            }
        }
        loading.add(adapter);
        return new Take(Take.Kind.LOAD, path, unload);
    }

    /** One request that {@link #acquire}d {@code adapter} ended. */
    void release(String adapter) {
        inUse.computeIfPresent(adapter, (k, n) -> n == 1 ? null : n - 1);
    }

    /** The unload of {@code adapter}, made to room for a load, succeeded at {@code now}. */
    void unloaded(String adapter, long now) {
        unloading.remove(adapter);
        changedAt.put(adapter, now);
        unloads++;
    }

    /** The unload of {@code adapter} failed: the engine may still hold it, and its next model list says. */
    void unloadFailed(String adapter) {
        unloading.remove(adapter);
    }

    /** {@code adapter}'s load ended well at {@code now} after {@code ms}; the loaded set changed. */
    void loaded(String adapter, String path, double ms, long now) {
        loading.remove(adapter);
        loaded.put(adapter, path);
        changedAt.put(adapter, now);
        loads++;
        loadTimes.addLast(ms);
        if (loadTimes.size() > LOAD_SAMPLES) {
            loadTimes.removeFirst();
        }
    }

    /** {@code adapter}'s load failed: a later request tries again. */
    void loadFailed(String adapter) {
        loading.remove(adapter);
    }

    /** The engine may be a new process: what it has loaded is read again at the next discovery. */
    void engineRestarted() {
        loaded.clear();
        discovered = false;
    }

    private String pathOf(String adapter) {
        String configured = settings.paths().get(adapter);
        return configured != null ? configured : discoveredPaths.get(adapter);
    }

    private String idleLeastRecentlyUsed() {
        for (String a : loaded.keySet()) {
            if (!inUse.containsKey(a)) {
                return a;
            }
        }
        return null;
    }

    private List<String> available() {
        TreeSet<String> all = new TreeSet<>(loaded.keySet());
        all.addAll(settings.paths().keySet());
        all.addAll(discoveredPaths.keySet());
        return List.copyOf(all);
    }

    /** Loads that went ahead with every loaded adapter in use (vLLM's LoRA cache then chose what stays). */
    long overcommitted() {
        return overcommitted;
    }

    AdapterStatus status() {
        List<String> mru = new ArrayList<>(loaded.keySet());
        Collections.reverse(mru);
        boolean measured = !loadTimes.isEmpty();
        double ms = measured ? loadTimes.stream().mapToDouble(Double::doubleValue).average().orElse(0) : settings.loadMs();
        return new AdapterStatus(mru, available(), settings.maxLoaded(), ms,
                measured ? AdapterStatus.MEASURED : AdapterStatus.CONFIGURED, loads, unloads);
    }
}
