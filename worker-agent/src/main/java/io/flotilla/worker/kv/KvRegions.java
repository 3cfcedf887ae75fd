package io.flotilla.worker.kv;

import io.flotilla.transfer.Backend;
import io.flotilla.transfer.MemoryRegion;
import io.flotilla.transfer.Registration;
import io.flotilla.transfer.TransferAgent;
import io.flotilla.worker.engine.KvMemory;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The engine's KV payload memory, registered with the worker's transfer agent. With the shm backend
 * enabled each engine region is one {@link TransferAgent#allocateShared} allocation, which a decode
 * worker on the same host reads through shared memory and any other through tcp; without it (e.g.
 * where /dev/shm is small, as in a container's default 64 MiB) a registered direct buffer, read
 * through tcp. Regions live as long as the agent; the engine must be closed before the agent (its
 * memory may be unmapped then).
 */
public final class KvRegions implements KvMemory {

    private final TransferAgent agent;
    private final boolean shared;
    private final Map<Integer, Registration> regions = new ConcurrentHashMap<>();

    public KvRegions(TransferAgent agent) {
        this.agent = agent;
        this.shared = agent.enabledBackends().contains(Backend.SHM);
    }

    @Override
    public ByteBuffer region(int region, int bytes) {
        Registration r = shared ? agent.allocateShared(bytes)
                : agent.register(MemoryRegion.of(ByteBuffer.allocateDirect(bytes)));
        if (regions.putIfAbsent(region, r) != null) {
            agent.deregister(r);
            throw new IllegalStateException("KV region " + region + " was already allocated");
        }
        return r.requireBuffer();
    }

    /** The agent's region id of engine region {@code region}. */
    public long registrationId(int region) {
        Registration r = regions.get(region);
        if (r == null) {
            throw new IllegalStateException("KV region " + region + " is not registered");
        }
        return r.id();
    }

    /** Engine regions allocated so far. */
    public int count() {
        return regions.size();
    }
}
