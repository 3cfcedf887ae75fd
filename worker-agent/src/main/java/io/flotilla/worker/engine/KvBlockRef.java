package io.flotilla.worker.engine;

/**
 * Where one KV block's bytes lie in an engine's memory.
 *
 * @param seqHash the block's identity
 * @param region  the engine's region index (see {@link KvMemory})
 * @param offset  byte offset inside the region
 * @param length  bytes
 */
public record KvBlockRef(long seqHash, int region, long offset, int length) {
}
