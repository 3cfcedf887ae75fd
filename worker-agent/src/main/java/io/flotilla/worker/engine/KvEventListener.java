package io.flotilla.worker.engine;

import io.flotilla.protocol.v1.KvEvent;

import java.util.List;

/**
 * Receives an engine's KV events. Calls never overlap; {@code position} starts at 1 and grows by
 * exactly one per call, so replaying batches 1..p over an empty set yields the resident set the
 * engine reported for position p in {@link Engine#residentBlocks()}.
 */
@FunctionalInterface
public interface KvEventListener {

    /**
     * @param position the batch's position, one more than the previous call's
     * @param events   non-empty, in the order the engine applied them; immutable
     */
    void onEvents(long position, List<KvEvent> events);
}
