package io.flotilla.worker.engine;

import java.nio.ByteBuffer;

/**
 * Where an engine that supports KV transfer keeps its KV payload: it asks for region 0, 1, ... the
 * first time it needs each, and keeps the returned memory for its whole life. Implementations
 * register the memory with a transfer agent.
 */
@FunctionalInterface
public interface KvMemory {

    /**
     * A direct buffer of exactly {@code bytes} capacity, valid until the engine closed.
     *
     * @param region the engine's index of the region, 0, 1, ... each asked for once
     */
    ByteBuffer region(int region, int bytes);
}
