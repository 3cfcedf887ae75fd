package io.flotilla.router.core;

import java.util.Set;

/**
 * The LoRA adapters a worker advertises (its status's adapter slots): those loaded now (a request for
 * one starts at once), those it can serve (it loads the others on demand), and what one load costs.
 * Immutable.
 *
 * @param loaded    adapters loaded (or loading) in the engine
 * @param available every adapter the worker can serve, the loaded ones included
 * @param loadMs    wall-clock milliseconds one load adds before a request's first step
 * @param maxLoaded adapters the engine holds at once (loading one more unloads one); 0 when it does not say
 */
public record WorkerAdapters(Set<String> loaded, Set<String> available, double loadMs, int maxLoaded) {

    /** A worker that serves no adapter. */
    public static final WorkerAdapters NONE = new WorkerAdapters(Set.of(), Set.of(), 0);

    /** A worker that does not say how many adapters it holds at once. */
    public WorkerAdapters(Set<String> loaded, Set<String> available, double loadMs) {
        this(loaded, available, loadMs, 0);
    }

    public WorkerAdapters {
        loaded = Set.copyOf(loaded);
        available = Set.copyOf(available);
        loadMs = Double.isFinite(loadMs) && loadMs > 0 ? loadMs : 0;
        maxLoaded = Math.max(0, maxLoaded);
    }

    /** Whether a request on {@code adapter} can run here ({@code ""}, the base model, always can). */
    public boolean serves(String adapter) {
        return adapter.isEmpty() || available.contains(adapter);
    }

    /** Whether a request on {@code adapter} starts without a load. */
    public boolean hasLoaded(String adapter) {
        return adapter.isEmpty() || loaded.contains(adapter);
    }
}
