package io.flotilla.worker.engine;

import java.util.List;

/**
 * The LoRA adapters of an engine, as its worker advertises them ({@code WorkerStatus.adapters}).
 *
 * @param loaded       adapters a request can use without a load (loading ones included), most recently used first
 * @param available    every adapter the engine can serve: the loaded ones and those it loads on demand
 * @param maxLoaded    adapters the engine holds at once
 * @param loadMs       what one load costs before a request's first step, in wall-clock milliseconds
 * @param loadMsSource {@code measured} (mean of recent loads) or {@code configured}
 * @param loads        adapters loaded since the engine started (a counter)
 * @param unloads      adapters unloaded to make room since the engine started (a counter)
 */
public record AdapterStatus(List<String> loaded, List<String> available, int maxLoaded, double loadMs,
                            String loadMsSource, long loads, long unloads) {

    public static final String MEASURED = "measured";
    public static final String CONFIGURED = "configured";

    public AdapterStatus {
        loaded = List.copyOf(loaded);
        available = List.copyOf(available);
    }
}
