package io.flotilla.transfer;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * Handle of memory registered with an agent. Descriptors name it by {@link #id()} (ids are never
 * reused within an agent) or by address inside [{@link #base()}, base + length).
 *
 * @param agent  name of the agent it is registered with
 * @param id     region id, positive, unique within the agent
 * @param base   address of byte 0: the real native address for the native engine, a synthetic
 *               (never dereferenced) one for the Java engine
 * @param length bytes
 * @param kind   memory kind
 * @param shared true when allocated by {@link TransferAgent#allocateShared(long)}
 * @param buffer a view of the memory when it is a buffer or a shared allocation of at most 2 GiB;
 *               for a native shared allocation it is valid only until deregistration
 */
public record Registration(String agent, long id, long base, long length, MemoryKind kind, boolean shared,
        Optional<ByteBuffer> buffer) {

    /** The whole region's view; fails when the registration has none. */
    public ByteBuffer requireBuffer() {
        return buffer.orElseThrow(() -> new IllegalStateException("region " + id + " has no ByteBuffer view"));
    }

    @Override
    public String toString() {
        return "Registration[" + agent + "#" + id + ", " + length + " bytes" + (shared ? ", shared" : "") + "]";
    }
}
