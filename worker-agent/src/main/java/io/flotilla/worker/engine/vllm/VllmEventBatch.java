package io.flotilla.worker.engine.vllm;

import java.util.List;

/**
 * One {@code KVEventBatch} as published on the engine's ZMQ socket.
 *
 * @param ts               engine wall-clock time in seconds when the batch was built
 * @param events           the events in the order the engine applied them
 * @param dataParallelRank the publishing data-parallel rank, or null when the engine omits it
 */
public record VllmEventBatch(double ts, List<VllmKvEvent> events, Integer dataParallelRank) {

    public VllmEventBatch {
        events = List.copyOf(events);
    }
}
